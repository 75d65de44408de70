import { describe, expect, it } from "vitest";
import { SlidingWindow, WINDOW_MS, type WindowEntry, type WindowStore } from "../../src/platform/sliding-window.ts";

/** A store as the RateLimiter's table would hold it: rows by id, ids never reused. */
class RowStore implements WindowStore {
  rows = new Map<number, WindowEntry>();
  writes = 0;
  private nextId = 1;
  insert(at: number, n: number, held: boolean): number {
    this.writes++;
    const id = this.nextId++;
    this.rows.set(id, { id, at, n, held });
    return id;
  }
  setCount(id: number, n: number): void {
    this.writes++;
    this.rows.get(id)!.n = n;
  }
  remove(id: number): void {
    this.writes++;
    this.rows.delete(id);
  }
  removeUpTo(cutoff: number): void {
    this.writes++;
    for (const [id, e] of this.rows) if (e.at <= cutoff) this.rows.delete(id);
  }
  /** What a restarted object reads back. */
  snapshot(): WindowEntry[] {
    return [...this.rows.values()].map((e) => ({ ...e }));
  }
}

describe("SlidingWindow (exact 60 s window)", () => {
  it("never allows more than the limit in any 60 s window, and frees slots as they age out", () => {
    const w = new SlidingWindow();
    const t0 = 1_000_000;
    for (let i = 0; i < 5; i++) expect(w.take(5, t0 + i * 1000).allowed).toBe(true);
    const denied = w.take(5, t0 + 10_000);
    expect(denied.allowed).toBe(false);
    // The oldest (t0) leaves the window at t0 + 60 s: retry after 50 s.
    expect(denied.retryAfter).toBe(50);
    expect(w.take(5, t0 + 59_999).allowed).toBe(false);
    expect(w.take(5, t0 + 60_000).allowed).toBe(true);
    expect(w.take(5, t0 + 60_001).allowed).toBe(false);
    expect(w.take(5, t0 + 61_000).allowed).toBe(true);
  });

  it("counts remaining down and reports when the full quota is back", () => {
    const w = new SlidingWindow();
    const a = w.take(3, 0);
    expect(a.remaining).toBe(2);
    const b = w.take(3, 2000);
    expect(b.remaining).toBe(1);
    expect(b.resetAt).toBe(62);
  });

  it("a lower limit (plan downgrade) applies at once", () => {
    const w = new SlidingWindow();
    for (let i = 0; i < 10; i++) w.take(100, i);
    expect(w.take(5, 20).allowed).toBe(false);
  });

  it("keeps memory bounded over a long run", () => {
    const w = new SlidingWindow();
    for (let t = 0; t < 600_000; t += 10) w.take(10_000, t);
    expect(w.count).toBeLessThanOrEqual(6000);
  });
});

describe("SlidingWindow leases", () => {
  it("held slots count from the end of their hold, so they may be used at any time within it", () => {
    const w = new SlidingWindow();
    const d = w.grant(10, 5, 0, 2000);
    expect(d.granted).toBe(5);
    expect(d.remaining).toBe(5);
    expect(w.take(10, 1000).remaining).toBe(4);
    // The slot used at once leaves at 60 s, the one taken at 1 s at 61 s, the held four only at 62 s.
    expect(w.take(10, 60_000).remaining).toBe(4);
    expect(w.take(10, 61_999).remaining).toBe(4);
    expect(w.take(10, 62_000).remaining).toBe(7);
  });

  it("gives back unused held slots, and ignores unknown leases", () => {
    const w = new SlidingWindow();
    const d = w.grant(10, 4, 0, 2000);
    w.release(d.leaseId, 2);
    expect(w.count).toBe(2);
    w.release(999, 5);
    expect(w.count).toBe(2);
  });

  it("caps a lease at a tenth of the limit", () => {
    const w = new SlidingWindow();
    expect(w.lease({ limit: 100, want: 50, holdMs: 2000, giveBack: [] }, 0).granted).toBe(10);
  });
});

describe("SlidingWindow with its store (the RateLimiter's storage)", () => {
  it("a window rebuilt from its store after a restart admits nothing the old one would not have", () => {
    const store = new RowStore();
    const w = new SlidingWindow(store);
    const t0 = 1_000_000;
    const lease = w.grant(10, 4, t0, t0 + 2000);
    for (let i = 0; i < 6; i++) expect(w.take(10, t0 + 100 + i).allowed).toBe(true);
    expect(w.take(10, t0 + 200).allowed).toBe(false);
    const restarted = new SlidingWindow(store, store.snapshot());
    expect(restarted.count).toBe(10);
    expect(restarted.take(10, t0 + 300).allowed).toBe(false);
    // It frees slots when the old one would have: the first at t0 + 60 s, the held three at t0 + 62 s.
    expect(restarted.take(10, t0 + WINDOW_MS).allowed).toBe(true);
    expect(restarted.take(10, t0 + WINDOW_MS + 50).allowed).toBe(false);
    // The lease from before the restart still gives back what it holds.
    restarted.release(lease.leaseId, 3);
    expect(restarted.count).toBe(7);
  });

  it("writes each change once and keeps only entries still in the window", () => {
    const store = new RowStore();
    const w = new SlidingWindow(store);
    for (let t = 0; t < 300_000; t += 100) w.take(1000, t);
    // One row per slot used (no lease here), and rows older than the window are gone.
    expect(store.rows.size).toBeLessThanOrEqual(WINDOW_MS / 100);
    expect(store.snapshot().length).toBeGreaterThan(0);
    expect(store.snapshot().every((e) => e.at > 300_000 - 100 - WINDOW_MS)).toBe(true);
    expect(store.writes).toBeLessThanOrEqual(2 * 3000);
  });

  it("gives back only held slots of a lease it issued, at most as many as it still holds", () => {
    const store = new RowStore();
    const w = new SlidingWindow(store);
    const used = w.take(100, 0);
    expect(used.leaseId).toBe(0);
    const lease = w.grant(100, 5, 0, 2000);
    expect(w.count).toBe(6);
    // The ids of slots used at once (1 and 2 here) are not leases: giving them back frees nothing.
    for (const id of [1, 2, 999, -1, 0]) w.release(id, 10);
    expect(w.count).toBe(6);
    for (const n of [Number.NaN, -3, 0.5, Number.POSITIVE_INFINITY]) w.release(lease.leaseId, n);
    expect(w.count).toBe(6);
    w.release(lease.leaseId, 100);
    expect(w.count).toBe(2);
    w.release(lease.leaseId, 100);
    expect(w.count).toBe(2);
    expect(store.rows.size).toBe(2);
  });

  it("a busy key's leases given back in any order: each found without a walk over the window, the count exact, the window as rebuilt", () => {
    const store = new RowStore();
    const w = new SlidingWindow(store);
    // 100,000 leases of 3 outstanding in one window (a walk per release: 5 billion comparisons).
    const leases: number[] = [];
    for (let i = 0; i < 100_000; i++) leases.push(w.grant(1_000_000, 3, 1_000 + i / 2, 1_010 + i / 2).leaseId);
    expect(w.count).toBe(300_000);
    // Given back in a shuffled order (a fixed permutation), one slot of each, then the other of each.
    const order = leases.map((_, i) => leases[(i * 7_919) % leases.length]!); // 7,919 is prime, 100,000 is not its multiple
    expect(new Set(order).size).toBe(leases.length);
    const started = performance.now();
    for (const id of order) w.release(id, 1);
    for (const id of order) w.release(id, 5);
    // Milliseconds here, even on a loaded machine; seconds for a walk per release.
    expect(performance.now() - started).toBeLessThan(3_000);
    expect(w.count).toBe(100_000);
    // Nothing given back is left held; the store has the used slots only, and a window rebuilt from it agrees.
    expect(store.rows.size).toBe(100_000);
    const rebuilt = new SlidingWindow(new RowStore(), store.snapshot());
    expect(rebuilt.count).toBe(w.count);
    for (const id of leases.slice(0, 100)) w.release(id, 1);
    expect(w.count).toBe(100_000);
  });
});
