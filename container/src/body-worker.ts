// The body parser's worker thread (see body.ts): parses and validates one body per message.
// It runs below the server's own priority (nice is per thread on Linux): parsing one account's
// multi-MiB body must not take the CPU from another's small job.
import { readlinkSync } from "node:fs";
import os from "node:os";
import { parentPort } from "node:worker_threads";
import type { Limits } from "./config.ts";
import { PARSER_NICE, parseInline } from "./body.ts";

try {
  // "<pid>/task/<tid>": this thread's id, which setpriority takes for one thread only
  const tid = Number(readlinkSync("/proc/thread-self").split("/").pop());
  if (tid > 0) os.setPriority(tid, Math.max(PARSER_NICE, os.getPriority(tid)));
} catch {} // not Linux, or not allowed: the thread keeps the server's priority

parentPort!.on("message", (m: { id: number; raw: Uint8Array; limits: Limits }) => {
  const raw = Buffer.from(m.raw.buffer, m.raw.byteOffset, m.raw.byteLength);
  parentPort!.postMessage({ id: m.id, result: parseInline(raw, m.limits) });
});
