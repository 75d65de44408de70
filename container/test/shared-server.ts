// The compile server shared by the test files of the "shared" project (vitest.config.ts), which
// run in parallel against it. They send jobs and read answers only: none may assume it owns the
// server's queue, counters, event-loop lag or warm processes (a file that does gets its own).
import { inject } from "vitest";
import type { StartOptions } from "../src/server.ts";

/**
 * Every file's jobs queue at once, all as the same account (no namespace): a queue that takes
 * them all (so a busy machine gives no 503) and waits as long as a file's longest test may. Both
 * compile slots are always busy, so a job gets less of the CPU than alone: every document gets the
 * time limit of 60 s (lualatex, biber and three passes took over 20 s at a load of 12, the corpus's
 * biblatex document on lualatex over 30 s at a load of 21).
 */
export const SHARED_OPTIONS: StartOptions = {
  poolSize: { pdflatex: 3, xelatex: 2, lualatex: 2 },
  queueTimeoutMs: 600_000,
  maxQueue: 256,
  maxQueuePerAccount: 256,
  limits: { defaultTimeoutMs: 60_000, maxTimeoutMs: 60_000 } as never,
};

/** The shared server, for `s.url` where a file used to start its own. */
export function sharedServer(): { url: string } {
  const url = inject("sharedCompilerUrl");
  if (!url) throw new Error("no shared compile server: run this file through container/vitest.config.ts");
  return { url };
}
