import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { EventFlush } from "../../src/messaging/sessions/event-flush.ts";

describe("EventFlush: a session's events to the queue, at most one hand-over per window", () => {
  beforeEach(() => void vi.useFakeTimers({ now: 1_000_000 }));
  afterEach(() => void vi.useRealTimers());

  it("an event after a quiet spell goes at once, with what the same turn adds", () => {
    const flushed: (string | object)[][] = [];
    const f = new EventFlush((items) => flushed.push(items), 100);
    f.add(["a"]);
    f.add(["b"]);
    expect(flushed).toEqual([]);
    vi.advanceTimersByTime(0);
    expect(flushed).toEqual([["a", "b"]]);
  });

  it("events during a window wait for its end and go together; then a quiet spell lets the next go at once", () => {
    const flushed: { at: number; items: (string | object)[] }[] = [];
    const f = new EventFlush((items) => flushed.push({ at: Date.now(), items }), 100);
    f.add(["a"]);
    vi.advanceTimersByTime(10);
    f.add(["b"]);
    vi.advanceTimersByTime(30);
    f.add(["c"]);
    vi.advanceTimersByTime(100);
    expect(flushed).toEqual([
      { at: 1_000_000, items: ["a"] },
      { at: 1_000_100, items: ["b", "c"] },
    ]);
    vi.advanceTimersByTime(500);
    f.add(["d"]);
    vi.advanceTimersByTime(0);
    expect(flushed.at(-1)).toEqual({ at: 1_000_640, items: ["d"] });
  });

  it("nothing added, nothing flushed", () => {
    const flush = vi.fn();
    const f = new EventFlush(flush, 100);
    f.add([]);
    vi.advanceTimersByTime(1_000);
    expect(flush).not.toHaveBeenCalled();
  });
});
