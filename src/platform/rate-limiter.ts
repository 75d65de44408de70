import { DurableObject } from "cloudflare:workers";

export const WINDOW_MS = 60_000;

export interface RateLimitDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Unix seconds at which the full quota is available again. */
  resetAt: number;
  /** Seconds until one more request would be allowed (0 when allowed). */
  retryAfter: number;
}

/**
 * An exact sliding 60-second window over accepted requests: the timestamps of the requests
 * accepted in the last 60 s, oldest first. Pure so it can be unit-tested without the runtime.
 */
export class SlidingWindow {
  private stamps: number[] = [];
  private head = 0;

  private prune(now: number): void {
    const cutoff = now - WINDOW_MS;
    while (this.head < this.stamps.length && this.stamps[this.head]! <= cutoff) this.head++;
    // Compact now and then so the array does not grow without bound.
    if (this.head > 1024 && this.head * 2 > this.stamps.length) {
      this.stamps = this.stamps.slice(this.head);
      this.head = 0;
    }
  }

  get count(): number {
    return this.stamps.length - this.head;
  }

  take(limit: number, now: number): RateLimitDecision {
    this.prune(now);
    const used = this.count;
    if (used < limit) {
      this.stamps.push(now);
      return { allowed: true, limit, remaining: limit - used - 1, resetAt: Math.ceil((now + WINDOW_MS) / 1000), retryAfter: 0 };
    }
    // The request that frees a slot is the (used - limit + 1)-th oldest one.
    const freeingStamp = this.stamps[this.head + (used - limit)]!;
    const newest = this.stamps[this.stamps.length - 1]!;
    return {
      allowed: false,
      limit,
      remaining: 0,
      resetAt: Math.ceil((newest + WINDOW_MS) / 1000),
      retryAfter: Math.max(1, Math.ceil((freeingStamp + WINDOW_MS - now) / 1000)),
    };
  }
}

/**
 * One instance per API key (or per client IP for unauthenticated requests). Durable Objects run
 * one request at a time, so check-and-record is atomic without locks. The window lives in memory:
 * an instance is only evicted after it has been idle, by which time its window is empty.
 */
export class RateLimiter extends DurableObject<Env> {
  private window = new SlidingWindow();

  take(limit: number): RateLimitDecision {
    return this.window.take(limit, Date.now());
  }
}
