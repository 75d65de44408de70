export const WINDOW_MS = 60_000;

export interface RateLimitDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Unix seconds at which the full quota is available again. */
  resetAt: number;
  /** Seconds until one more request would be allowed (0 when allowed). */
  retryAfter: number;
  /** Slots granted by `grant` (one of them used at once); 0 when denied. */
  granted: number;
  /** Identifies the slots held for later use, for giving back the unused ones. */
  leaseId: number;
}

export interface LeaseRequest {
  limit: number;
  /** Slots wanted: one for the request at hand, the rest held by the caller's isolate. */
  want: number;
  /** How long the caller may use held slots. */
  holdMs: number;
  /** Unused slots of earlier leases, given back. */
  giveBack: { leaseId: number; n: number }[];
}

/** No lease holds more than this share of a key's limit, so other isolates are not starved. */
const MAX_LEASE_SHARE = 0.1;

/** A group of slots taken at `at`: each leaves the window at `at + WINDOW_MS`. */
export interface WindowEntry {
  id: number;
  at: number;
  n: number;
  /** Slots held by an isolate (a lease): only these can be given back. */
  held: boolean;
}

/**
 * Where the entries are kept besides memory. Each change is written as it is made, so that a
 * window rebuilt from the store after a restart is the window as it was.
 */
export interface WindowStore {
  /** Records a new entry and answers its id: unique for the life of the store, never reused. */
  insert(at: number, n: number, held: boolean): number;
  setCount(id: number, n: number): void;
  remove(id: number): void;
  /** Drops every entry with `at <= cutoff`. */
  removeUpTo(cutoff: number): void;
}

/** A store that is only memory (tests, or a window that need not survive its object). */
export class MemoryStore implements WindowStore {
  private nextId = 1;
  insert(): number {
    return this.nextId++;
  }
  setCount(): void {}
  remove(): void {}
  removeUpTo(): void {}
}

/**
 * An exact sliding 60-second window: never more than `limit` slots in any 60 s. A slot is either
 * used at once (stamped now) or held for later use until `holdUntil` (stamped then, so it counts
 * as if used at the last moment it may be used). Pure apart from its store, so it is unit-tested
 * without the runtime.
 */
export class SlidingWindow {
  /** Sorted by (`at`, `id`): ids only grow, and an entry goes after those with the same `at`. Grouped, so a lease of many slots is one entry. */
  private entries: WindowEntry[] = [];
  /** Held entries by id: a lease given back is found without a walk over the window (a busy key's holds thousands). */
  private readonly held = new Map<number, WindowEntry>();
  /** Entries given back whole (n = 0) still in `entries`: dropped as they age out, from the end, or all at once when they are half. */
  private emptied = 0;
  private used = 0;
  private readonly store: WindowStore;

  /** `entries`: what `store` held (after a restart), in any order. */
  constructor(store: WindowStore = new MemoryStore(), entries: WindowEntry[] = []) {
    this.store = store;
    this.entries = [...entries].sort((a, b) => a.at - b.at || a.id - b.id);
    for (const e of this.entries) {
      this.used += e.n;
      if (e.held) this.held.set(e.id, e);
    }
  }

  private prune(now: number): void {
    const cutoff = now - WINDOW_MS;
    let i = 0;
    while (i < this.entries.length && this.entries[i]!.at <= cutoff) {
      const e = this.entries[i++]!;
      this.used -= e.n;
      if (e.n === 0) this.emptied--;
      if (e.held) this.held.delete(e.id);
    }
    if (i > 0) {
      this.entries.splice(0, i);
      this.store.removeUpTo(cutoff);
    }
  }

  private insert(at: number, n: number, held: boolean): number {
    const id = this.store.insert(at, n, held);
    let i = this.entries.length;
    while (i > 0 && this.entries[i - 1]!.at > at) i--;
    const e = { id, at, n, held };
    this.entries.splice(i, 0, e);
    if (held) this.held.set(id, e);
    this.used += n;
    return id;
  }

  /** Slots in the window now. */
  get count(): number {
    return this.used;
  }

  /** One slot used now. */
  take(limit: number, now: number): RateLimitDecision {
    return this.grant(limit, 1, now, now);
  }

  /**
   * Up to `want` slots (at least one when any is free; at most `maxGrant`): one used now, the
   * others held until `holdUntil`.
   */
  grant(limit: number, want: number, now: number, holdUntil: number, maxGrant = want): RateLimitDecision {
    this.prune(now);
    const free = limit - this.used;
    if (free <= 0) return this.denied(limit, now);
    const n = Math.max(1, Math.min(want, maxGrant, free));
    this.insert(now, 1, false);
    const leaseId = n > 1 ? this.insert(Math.max(now, holdUntil), n - 1, true) : 0;
    return { allowed: true, limit, remaining: limit - this.used, resetAt: this.resetAt(), retryAfter: 0, granted: n, leaseId };
  }

  /** A lease for an isolate (see rate-limit-permits.ts): earlier unused slots back, then new ones. */
  lease(req: LeaseRequest, now: number): RateLimitDecision {
    for (const g of req.giveBack) this.release(g.leaseId, g.n);
    return this.grant(req.limit, req.want, now, now + req.holdMs, Math.max(1, Math.floor(req.limit * MAX_LEASE_SHARE)));
  }

  /**
   * Gives back `n` held slots of a lease that were not used. Only a lease this window issued, and
   * only as many slots as it still holds: a slot used at once, an unknown id, or a lease already
   * given back (or aged out) frees nothing.
   */
  release(leaseId: number, n: number): void {
    if (!Number.isInteger(n) || n <= 0) return;
    const e = this.held.get(leaseId);
    if (!e) return;
    const back = Math.min(n, e.n);
    e.n -= back;
    this.used -= back;
    if (e.n === 0) {
      // Left in place (a splice would move the whole window for each): the newest entry is kept live, as resetAt reads it.
      this.held.delete(e.id);
      this.store.remove(e.id);
      this.emptied++;
      while (this.entries.length > 0 && this.entries[this.entries.length - 1]!.n === 0) {
        this.entries.pop();
        this.emptied--;
      }
      if (this.emptied > 64 && this.emptied * 2 > this.entries.length) {
        this.entries = this.entries.filter((x) => x.n > 0);
        this.emptied = 0;
      }
    } else this.store.setCount(e.id, e.n);
  }

  private resetAt(): number {
    const newest = this.entries[this.entries.length - 1];
    return Math.ceil(((newest?.at ?? 0) + WINDOW_MS) / 1000);
  }

  private denied(limit: number, now: number): RateLimitDecision {
    // One more is allowed once (used - limit + 1) slots have left the window, oldest first.
    let toFree = this.used - limit + 1;
    let freeAt = now;
    for (const e of this.entries) {
      toFree -= e.n;
      if (toFree <= 0) {
        freeAt = e.at + WINDOW_MS;
        break;
      }
    }
    return { allowed: false, limit, remaining: 0, resetAt: this.resetAt(), retryAfter: Math.max(1, Math.ceil((freeAt - now) / 1000)), granted: 0, leaseId: 0 };
  }
}
