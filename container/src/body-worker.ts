// The body parser's worker thread (see body.ts): parses and validates one body per message.
import { parentPort } from "node:worker_threads";
import type { Limits } from "./config.ts";
import { parseInline } from "./body.ts";

parentPort!.on("message", (m: { id: number; raw: Uint8Array; limits: Limits }) => {
  const raw = Buffer.from(m.raw.buffer, m.raw.byteOffset, m.raw.byteLength);
  parentPort!.postMessage({ id: m.id, result: parseInline(raw, m.limits) });
});
