import type { EventRecord } from "../../events/types.ts";

/**
 * Collects a session's events and hands them to the queue together: at most one hand-over per
 * `delayMs`. An event after a quiet spell goes at once (a lone message's webhook does not wait out
 * a window); one arriving while a window runs waits for its end, with the others of that window.
 */
export class EventFlush {
  private readonly items: (string | EventRecord)[] = [];
  private timer: ReturnType<typeof setTimeout> | null = null;
  private lastFlushAt = -Infinity;
  private readonly flush: (items: (string | EventRecord)[]) => void;
  private readonly delayMs: number;

  constructor(flush: (items: (string | EventRecord)[]) => void, delayMs: number) {
    this.flush = flush;
    this.delayMs = delayMs;
  }

  /** Events by id (recorded in D1), or as records (recorded, and carried on the queue with their content). */
  add(items: (string | EventRecord)[]): void {
    if (items.length === 0) return;
    this.items.push(...items);
    if (this.timer !== null) return;
    // A zero wait still takes what the same turn adds (a timer, not a call).
    const wait = Math.max(0, this.lastFlushAt + this.delayMs - Date.now());
    this.timer = setTimeout(() => {
      this.timer = null;
      this.lastFlushAt = Date.now();
      this.flush(this.items.splice(0));
    }, wait);
  }
}
