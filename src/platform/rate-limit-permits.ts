import type { LeaseRequest, RateLimitDecision } from "./sliding-window.ts";

/** How long an isolate may spend slots it was granted. */
export const HOLD_MS = 2_000;
/** Held slots are not used in the last part of the hold, in case the isolate's clock runs ahead of the Durable Object's. */
const CLOCK_MARGIN_MS = 250;
const MAX_WANT = 1_000;

type LeaseFn = (req: LeaseRequest) => Promise<RateLimitDecision>;

interface Held {
  leaseId: number;
  left: number;
  usableUntil: number;
}

/**
 * One key's slots held by this isolate. A request spends a held slot without a Durable Object
 * round trip; when none is left, it asks the RateLimiter for a new lease sized to this isolate's
 * recent request rate (one slot when it is idle). Exactness is kept by the object, which counts
 * held slots as used at the end of their hold; slots not used in time are given back on the next
 * lease (or leave the window a minute later).
 */
export class PermitPool {
  private held: Held[] = [];
  private limit = 0;
  /** The object's count of free slots at the last lease (slots held here excluded). */
  private objectRemaining = 0;
  private resetAt = 0;
  private lastAt = 0;
  /** Smoothed gap between this key's requests in this isolate. */
  private gapMs = Number.POSITIVE_INFINITY;

  async acquire(limit: number, lease: LeaseFn, now = Date.now()): Promise<RateLimitDecision> {
    this.observe(now);
    if (limit !== this.limit) {
      // A plan change: what was granted under the old limit goes back.
      this.limit = limit;
      for (const h of this.held) h.usableUntil = 0;
    }
    const usable = this.held.find((h) => h.left > 0 && h.usableUntil > now);
    if (usable) {
      usable.left--;
      return { allowed: true, limit, remaining: this.objectRemaining + this.heldCount(now), resetAt: this.resetAt, retryAfter: 0, granted: 1, leaseId: 0 };
    }
    // Give back whatever is no longer usable before asking (synchronously dropped, so no concurrent request spends it).
    const giveBack = this.held.filter((h) => h.left > 0).map((h) => ({ leaseId: h.leaseId, n: h.left }));
    this.held = [];
    const sentAt = now;
    const d = await lease({ limit, want: this.want(), holdMs: HOLD_MS, giveBack });
    if (!d.allowed) {
      // Leases of concurrent requests may have come back meanwhile with slots to spare: those are ours too.
      const spare = this.held.find((h) => h.left > 0 && h.usableUntil > now);
      if (spare) {
        spare.left--;
        return { allowed: true, limit, remaining: this.objectRemaining + this.heldCount(now), resetAt: this.resetAt, retryAfter: 0, granted: 1, leaseId: 0 };
      }
      return d;
    }
    this.objectRemaining = d.remaining;
    this.resetAt = d.resetAt;
    // The object's hold began no earlier than `sentAt` (by its clock): end ours before its end.
    if (d.granted > 1) this.held.push({ leaseId: d.leaseId, left: d.granted - 1, usableUntil: sentAt + HOLD_MS - CLOCK_MARGIN_MS });
    return { ...d, remaining: d.remaining + this.heldCount(now) };
  }

  private heldCount(now: number): number {
    let n = 0;
    for (const h of this.held) if (h.usableUntil > now) n += h.left;
    return n;
  }

  private observe(now: number): void {
    if (this.lastAt > 0) {
      const gap = Math.max(0, now - this.lastAt);
      this.gapMs = Number.isFinite(this.gapMs) ? this.gapMs * 0.7 + gap * 0.3 : gap;
    }
    this.lastAt = now;
  }

  /** Slots this isolate is likely to use within a hold: one for a first or occasional request. */
  private want(): number {
    if (!Number.isFinite(this.gapMs) || this.gapMs >= HOLD_MS) return 1;
    return Math.min(MAX_WANT, Math.max(1, Math.ceil(HOLD_MS / Math.max(1, this.gapMs))));
  }
}

/** Per-key pools of this isolate (keys are few per isolate; a pool is a few numbers). */
const pools = new Map<string, PermitPool>();
const MAX_POOLS = 10_000;

export function permitPool(bucket: string): PermitPool {
  let p = pools.get(bucket);
  if (!p) {
    if (pools.size >= MAX_POOLS) pools.delete(pools.keys().next().value!);
    p = new PermitPool();
    pools.set(bucket, p);
  }
  return p;
}
