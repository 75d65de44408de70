// The compile server's tests: plain Node environment, real TeX, generous timeouts. Two groups, one
// after the other. First, side by side: the files that only send jobs, against one shared server
// (started by the global setup), and the files that start servers of their own configuration but
// assume nothing about the machine's timing or the test process's other work (hostile's time limits
// are its jobs' own, checked by their messages; preamble-corpus and
// preamble mostly wait for dumps that run at the lowest priority, so the other files' compiles fill
// the cores meanwhile). Then, one at a time, the files that measure time, event-loop lag, CPU
// priority or the server's queue and processes under a quiet machine: 2-core CI.
import path from "node:path";
import { defineConfig } from "vitest/config";
import { resolveTexRoot, TEX_ROOT_BIN } from "./src/texroot.ts";
import { LongFirst } from "./test/long-first.ts";

// With a TeX root filesystem (npm run tex:ensure) the servers' jobs run its TeX: what the tests run
// themselves (bare engines, kpsewhich, pdftotext) must be the same, through its wrappers
const texRoot = resolveTexRoot(process.env);
if (texRoot && !process.env.PATH?.startsWith(path.join(texRoot, TEX_ROOT_BIN))) process.env.PATH = `${path.join(texRoot, TEX_ROOT_BIN)}:${process.env.PATH ?? "/usr/bin:/bin"}`;

/** Files that talk to the shared server only (shared-server.ts says what they may not assume). */
const SHARED = ["compile", "corpus", "packages", "passes", "project", "shell-escape", "tools-untrusted", "project-names", "project-fonts", "project-installed", "projects-corpus", "outputs", "outputs-synctex"].map((n) => `test/${n}.test.ts`);
/**
 * Run beside them: files with servers of their own (or none) that assume nothing about timing, load
 * or which processes the machine runs besides their own servers' (each server has its own port, job
 * root, cgroups and random job uids).
 */
const OWN = ["preamble-corpus", "preamble", "preamble-cache", "caps", "driver", "errors", "hostile", "http", "isolation", "job-events", "outputs-unit", "project-mf", "restricted-reads", "sandbox", "uids", "unit", "xelatex-warm", "xindy-untrusted"];
const PARALLEL = [...SHARED, ...OWN.map((n) => `test/${n}.test.ts`)];

export default defineConfig({
  test: {
    root: import.meta.dirname,
    environment: "node",
    testTimeout: 60_000,
    sequence: { sequencer: LongFirst },
    hookTimeout: 120_000,
    projects: [
      {
        extends: true,
        // four at a time, the longest first (test/long-first.ts): preamble-corpus and preamble hold
        // one each for most of the group; none of them is left running alone at its end
        test: {
          name: "compile-server (shared server)",
          include: PARALLEL,
          globalSetup: ["test/global-setup.ts"],
          fileParallelism: true,
          maxWorkers: 4,
          // a test's time includes its jobs' wait in a queue of every file's jobs on shared cores
          testTimeout: 180_000,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: { name: "compile-server", include: ["test/**/*.test.ts"], exclude: PARALLEL, globalSetup: ["test/tex-setup.ts"], fileParallelism: false, sequence: { groupOrder: 1 } },
      },
    ],
  },
});
