// JobEvents on its own: the ring's bound, a slow reader's gap, the log's rate limit.
import { EventEmitter } from "node:events";
import type { ServerResponse } from "node:http";
import { describe, expect, it } from "vitest";
import { JobEvents, LOG_BURST, MAX_LINE_CHARS, MAX_READERS, RING_SIZE } from "../src/job-events.ts";

/** A response whose socket takes nothing until drained by hand. */
class SlowResponse extends EventEmitter {
  written: string[] = [];
  full = false;
  ended = false;
  writeHead() {
    return this;
  }
  write(s: string): boolean {
    this.written.push(s);
    return !this.full;
  }
  end() {
    this.ended = true;
  }
  drain() {
    this.full = false;
    this.emit("drain");
  }
  bytes() {
    return this.written.join("").length;
  }
}

const eventsOf = (r: SlowResponse) =>
  r.written
    .join("")
    .split("\n\n")
    .filter((b) => b.startsWith("id:") || b.startsWith("event:"))
    .map((b) => ({ type: /event: (.*)/.exec(b)![1], data: JSON.parse(/data: (.*)/.exec(b)![1]!) }));

describe("JobEvents", () => {
  it("a reader whose socket is full is not buffered for: it gets one gap event, then the kept tail", () => {
    const ev = new JobEvents();
    const r = new SlowResponse();
    r.full = true;
    ev.serve(r as unknown as ServerResponse, 0);
    ev.emit("pass", { pass: -1 });
    const before = r.written.length; // the first write found the socket full
    for (let i = 0; i < 20 * RING_SIZE; i++) ev.emit("pass", { pass: i });
    expect(r.written.length).toBe(before);
    expect(ev.since(0).events.length).toBe(RING_SIZE);
    ev.end("result", { ok: true });
    r.drain();
    const got = eventsOf(r);
    const gap = got.find((e) => e.type === "gap");
    expect(gap?.data.missed).toBeGreaterThan(18 * RING_SIZE);
    expect(got.at(-1)).toEqual({ type: "result", data: { ok: true } });
    expect(got.length).toBeLessThanOrEqual(RING_SIZE + 2);
    expect(r.ended).toBe(true);
    expect(ev.readerCount).toBe(0);
  });

  it("log lines: a burst, then counted not sent; every line cut to its bound", () => {
    const ev = new JobEvents();
    ev.output(`${"x".repeat(10 * MAX_LINE_CHARS)}\n`);
    ev.output(Array.from({ length: 1000 }, (_, i) => `line ${i}`).join("\n") + "\n");
    ev.end("result", { ok: true });
    const all = ev.since(0).events;
    const logs = all.filter((e) => e.type === "log");
    expect(logs.length).toBe(LOG_BURST);
    expect((logs[0]!.data.line as string).length).toBe(MAX_LINE_CHARS);
    expect(all.find((e) => e.type === "log-skipped")?.data.lines).toBe(1001 - LOG_BURST);
  });

  it("a line without its end is bounded too", () => {
    const ev = new JobEvents();
    for (let i = 0; i < 1000; i++) ev.output("y".repeat(10_000));
    ev.end("result", { ok: true });
    const logs = ev.since(0).events.filter((e) => e.type === "log");
    expect(logs.map((e) => (e.data.line as string).length)).toEqual([MAX_LINE_CHARS]);
  });

  it("at most MAX_READERS readers", () => {
    const ev = new JobEvents();
    for (let i = 0; i < MAX_READERS; i++) expect(ev.serve(new SlowResponse() as unknown as ServerResponse, 0)).toBe("ok");
    expect(ev.serve(new SlowResponse() as unknown as ServerResponse, 0)).toBe("too_many");
  });

  it("Last-Event-ID past the end or garbage-free numbers only replay what is kept", () => {
    const ev = new JobEvents();
    for (let i = 0; i < 5; i++) ev.emit("pass", { pass: i });
    const r = new SlowResponse();
    ev.serve(r as unknown as ServerResponse, 3);
    expect(eventsOf(r).map((e) => e.data.pass)).toEqual([3, 4]);
    const late = new SlowResponse();
    ev.serve(late as unknown as ServerResponse, 1_000_000);
    expect(eventsOf(late)).toEqual([]);
  });
});
