import { describe, expect, it } from "vitest";
import { SlidingWindow } from "../../src/platform/sliding-window.ts";

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
