// Parsing and validating a POST /compile body. JSON.parse and the decoding of files cost
// about 10-15 ms per MiB, all on one thread; a body near MAX_REQUEST_BYTES would hold the
// thread every request of every account waits on for hundreds of milliseconds. Small bodies
// (most requests) are parsed in place; larger ones in a worker thread, with a deadline.
import { Worker } from "node:worker_threads";
import type { Limits } from "./config.ts";
import { type CompileRequest, type Issue, validateCompile } from "./validate.ts";

export type Parsed = { ok: true; value: CompileRequest } | { ok: false; issues: Issue[] };

/** Bodies up to this size are parsed on the main thread (well under a millisecond). */
export const INLINE_MAX_BYTES = 256 * 1024;
/** The worker thread's nice value: one account's large body yields the CPU to another's small job. */
export const PARSER_NICE = 10;
/** A parse in the worker that takes longer is abandoned (the worker is replaced). */
const PARSE_DEADLINE_MS = 10_000;

export function parseInline(raw: Buffer, limits: Limits): Parsed {
  let body: unknown;
  try {
    body = JSON.parse(raw.toString("utf8"));
  } catch {
    return { ok: false, issues: [{ path: "", message: "body is not valid JSON" }] };
  }
  return validateCompile(body, limits);
}

export class ParseTimeout extends Error {}

interface Pending {
  resolve: (p: Parsed) => void;
  reject: (e: Error) => void;
  timer: NodeJS.Timeout;
}

/** One worker thread, started on first use; requests are answered in order. */
export class BodyParser {
  private worker: Worker | undefined;
  private nextId = 0;
  private readonly pending = new Map<number, Pending>();
  private readonly limits: Limits;

  constructor(limits: Limits) {
    this.limits = limits;
  }

  /** Parses `raw`; a body over INLINE_MAX_BYTES is handed to the worker and `raw` is empty afterwards. */
  parse(raw: Buffer): Promise<Parsed> {
    if (raw.length <= INLINE_MAX_BYTES) return Promise.resolve(parseInline(raw, this.limits));
    const w = this.start();
    const id = this.nextId++;
    return new Promise<Parsed>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new ParseTimeout(`parsing the body took over ${PARSE_DEADLINE_MS} ms`));
        this.restart();
      }, PARSE_DEADLINE_MS);
      this.pending.set(id, { resolve, reject, timer });
      // hand the bytes over rather than copy them on this thread (a body owns its memory
      // unless it is a slice of a shared pool, which is never this large)
      const own = raw.byteOffset === 0 && raw.byteLength === raw.buffer.byteLength && raw.buffer instanceof ArrayBuffer;
      const bytes = own ? raw : Uint8Array.prototype.slice.call(raw);
      w.postMessage({ id, raw: bytes, limits: this.limits }, [bytes.buffer as ArrayBuffer]);
    });
  }

  private start(): Worker {
    if (this.worker) return this.worker;
    const w = new Worker(new URL("./body-worker.ts", import.meta.url));
    w.unref();
    w.on("message", (m: { id: number; result: Parsed }) => {
      const p = this.pending.get(m.id);
      if (!p) return;
      this.pending.delete(m.id);
      clearTimeout(p.timer);
      if (m.result.ok) {
        // structured clone gives Uint8Arrays back; the job code works with Buffers
        for (const f of m.result.value.files) f.data = Buffer.from(f.data.buffer, f.data.byteOffset, f.data.byteLength);
      }
      p.resolve(m.result);
    });
    const fail = (e: Error) => {
      if (this.worker === w) this.worker = undefined;
      for (const [id, p] of this.pending) {
        clearTimeout(p.timer);
        p.reject(e);
        this.pending.delete(id);
      }
    };
    w.on("error", fail);
    w.on("exit", () => fail(new Error("the body parser thread exited")));
    this.worker = w;
    return w;
  }

  private restart(): void {
    const w = this.worker;
    this.worker = undefined;
    void w?.terminate();
  }

  close(): Promise<void> {
    const w = this.worker;
    this.worker = undefined;
    return w ? w.terminate().then(() => {}) : Promise.resolve();
  }
}
