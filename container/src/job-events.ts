// A job's progress as Server-Sent Events: passes, tools, log lines and its result, kept in a
// bounded ring that any number (bounded) of readers follow at their own pace.
import type { ServerResponse } from "node:http";

export interface JobEvent {
  /** 1, 2, 3... in the order emitted: the SSE `id`, what Last-Event-ID names. */
  seq: number;
  type: string;
  data: Record<string, unknown>;
}

/** Events kept per job; a reader further behind than this is told what it missed (`gap`). */
export const RING_SIZE = 512;
/** A log line is cut to this many characters (TeX wraps its terminal output at 79). */
export const MAX_LINE_CHARS = 400;
/** Log lines: a burst of this many, then LOG_LINES_PER_SECOND; the rest are counted, not sent. */
export const LOG_BURST = 100;
export const LOG_LINES_PER_SECOND = 20;
/** Readers per job at once (a console tab or two, the API's proxy): more get 429. */
export const MAX_READERS = 8;
/** A comment line this often keeps idle connections (and proxies in front) open. */
const KEEPALIVE_MS = 15_000;

export type EventsOpen = "ok" | "too_many";

/**
 * The events of one job. Writers never wait: emit() puts the event in the ring and wakes the
 * readers. Each reader writes from its own position while its socket takes data; a reader whose
 * socket is full waits for `drain`, and if the ring moved past it meanwhile it gets one `gap`
 * event (how many it missed) and goes on from the oldest kept. Memory is the ring's, whatever
 * the readers do.
 */
export class JobEvents {
  private readonly ring: JobEvent[] = [];
  private seq = 0;
  private ended = false;
  private readonly readers = new Set<() => void>();
  private tokens = LOG_BURST;
  private refilledAt = Date.now();
  private skipped = 0;
  private partial = "";

  emit(type: string, data: Record<string, unknown> = {}): void {
    if (this.ended) return;
    this.flushSkipped();
    this.push(type, data);
  }

  /** The last event: the job's result. Readers write it and close. */
  end(type: string, data: Record<string, unknown>): void {
    if (this.ended) return;
    this.flushPartial();
    this.flushSkipped();
    this.push(type, data);
    this.ended = true;
    for (const wake of this.readers) wake();
  }

  get finished(): boolean {
    return this.ended;
  }

  /** Engine or tool output: split into lines, each cut to MAX_LINE_CHARS, rate-limited. */
  output(chunk: Buffer | string): void {
    if (this.ended) return;
    const text = this.partial + (typeof chunk === "string" ? chunk : chunk.toString("utf8"));
    const lines = text.split(/\r?\n/);
    // a line without its end yet waits for the next chunk, bounded
    this.partial = lines.pop()!.slice(0, MAX_LINE_CHARS);
    for (const line of lines) this.line(line);
  }

  /** The output so far ends here (a pass's log is over): its last line, even without its end. */
  flushPartial(): void {
    if (this.partial) this.line(this.partial);
    this.partial = "";
  }

  private line(line: string): void {
    if (line.trim() === "") return;
    const now = Date.now();
    this.tokens = Math.min(LOG_BURST, this.tokens + ((now - this.refilledAt) / 1000) * LOG_LINES_PER_SECOND);
    this.refilledAt = now;
    if (this.tokens < 1) {
      this.skipped++;
      return;
    }
    this.tokens--;
    this.flushSkipped();
    // the first MAX_LINE_CHARS code points lie within twice as many code units: no array of the whole line
    this.push("log", { line: Array.from(line.slice(0, 2 * MAX_LINE_CHARS)).slice(0, MAX_LINE_CHARS).join("") });
  }

  private flushSkipped(): void {
    if (this.skipped === 0) return;
    const n = this.skipped;
    this.skipped = 0;
    this.push("log-skipped", { lines: n });
  }

  private push(type: string, data: Record<string, unknown>): void {
    this.ring.push({ seq: ++this.seq, type, data });
    if (this.ring.length > RING_SIZE) this.ring.shift();
    for (const wake of this.readers) wake();
  }

  /** The events after `after` that are still kept, and how many between were dropped. */
  since(after: number): { missed: number; events: JobEvent[] } {
    const first = this.ring[0]?.seq ?? this.seq + 1;
    const from = Math.max(after + 1, first);
    return { missed: Math.max(0, first - (after + 1)), events: this.ring.slice(from - first) };
  }

  /**
   * Streams the events after `lastEventId` to `res` as SSE until the job ends (then closes) or
   * the reader goes. "too_many": MAX_READERS already follow this job (nothing was written).
   */
  serve(res: ServerResponse, lastEventId: number): EventsOpen {
    if (this.readers.size >= MAX_READERS) return "too_many";
    res.writeHead(200, { "Content-Type": "text/event-stream; charset=utf-8", "Cache-Control": "no-store", "X-Accel-Buffering": "no" });
    let cursor = Math.max(0, Math.min(lastEventId, this.seq));
    let blocked = false;
    let closed = false;
    const write = (s: string) => {
      if (!res.write(s)) blocked = true;
    };
    const pump = () => {
      if (closed || blocked) return;
      const { missed, events } = this.since(cursor);
      if (missed > 0) write(`event: gap\ndata: ${JSON.stringify({ missed })}\n\n`);
      for (const e of events) {
        cursor = e.seq;
        write(`id: ${e.seq}\nevent: ${e.type}\ndata: ${JSON.stringify(e.data)}\n\n`);
        if (blocked) return;
      }
      if (this.ended) stop(true);
    };
    const onDrain = () => {
      blocked = false;
      pump();
    };
    const keepalive = setInterval(() => !blocked && write(": keepalive\n\n"), KEEPALIVE_MS);
    keepalive.unref();
    const stop = (end: boolean) => {
      if (closed) return;
      closed = true;
      clearInterval(keepalive);
      this.readers.delete(pump);
      res.off("drain", onDrain);
      if (end) res.end();
    };
    res.on("drain", onDrain);
    res.once("close", () => stop(false));
    this.readers.add(pump);
    pump();
    return "ok";
  }

  get readerCount(): number {
    return this.readers.size;
  }
}
