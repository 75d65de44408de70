import { describe, expect, it } from "vitest";
import { HOLD_MS, PermitPool } from "../../src/platform/rate-limit-permits.ts";
import { SlidingWindow, WINDOW_MS, type LeaseRequest } from "../../src/platform/sliding-window.ts";

/** A RateLimiter object (one SlidingWindow) behind a lease call that takes `rttMs` of a shared clock. */
function limiter(clock: { now: number }, rttMs = 0) {
  const window = new SlidingWindow();
  let calls = 0;
  return {
    window,
    get calls() {
      return calls;
    },
    lease: async (req: LeaseRequest) => {
      calls++;
      clock.now += rttMs / 2;
      const d = window.lease(req, clock.now);
      clock.now += rttMs / 2;
      return d;
    },
  };
}

/** A pool that has served `n` quick requests with a limit of 1000, so it holds a lease. */
async function busyPool(n: number) {
  const clock = { now: 0 };
  const rl = limiter(clock);
  const pool = new PermitPool();
  for (let i = 0; i < n; i++) {
    await pool.acquire(1000, rl.lease, clock.now);
    clock.now += 10;
  }
  return { clock, rl, pool };
}

describe("PermitPool (slots leased from the RateLimiter, spent without a round trip)", () => {
  it("one isolate: remaining counts down exactly, the 101st is refused, and most requests skip the object", async () => {
    const clock = { now: 1_000_000 };
    const rl = limiter(clock);
    const pool = new PermitPool();
    for (let i = 0; i < 100; i++) {
      const d = await pool.acquire(100, rl.lease, clock.now);
      expect(d.allowed).toBe(true);
      expect(d.remaining).toBe(99 - i);
      clock.now += 5;
    }
    const over = await pool.acquire(100, rl.lease, clock.now);
    expect(over.allowed).toBe(false);
    expect(over.retryAfter).toBeGreaterThan(0);
    expect(over.retryAfter).toBeLessThanOrEqual(60);
    expect(rl.calls).toBeLessThan(20);
  });

  it("an idle key leases one slot at a time, so nothing is held for it", async () => {
    const clock = { now: 0 };
    const rl = limiter(clock);
    const pool = new PermitPool();
    for (let i = 0; i < 5; i++) {
      expect((await pool.acquire(100, rl.lease, clock.now)).granted).toBe(1);
      clock.now += 10_000;
    }
    expect(rl.window.count).toBe(5);
  });

  it("several isolates with random traffic never exceed the limit in any 60 s window of actual use", async () => {
    const clock = { now: 0 };
    const rl = limiter(clock, 3);
    const pools = Array.from({ length: 4 }, () => new PermitPool());
    const used: number[] = [];
    let seed = 7;
    const rand = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    const limit = 200;
    while (clock.now < 5 * WINDOW_MS) {
      clock.now += Math.floor(rand() * 120);
      const pool = pools[Math.floor(rand() * pools.length)]!;
      const d = await pool.acquire(limit, rl.lease, clock.now);
      if (d.allowed) used.push(clock.now);
    }
    let maxInWindow = 0;
    for (let i = 0, j = 0; i < used.length; i++) {
      while (used[i]! - used[j]! >= WINDOW_MS) j++;
      maxInWindow = Math.max(maxInWindow, i - j + 1);
    }
    expect(maxInWindow).toBeLessThanOrEqual(limit);
    // Leasing should not waste much of the quota either.
    expect(maxInWindow).toBeGreaterThan(limit * 0.8);
  });

  it("slots not used within the hold are given back on the next lease", async () => {
    const { clock, rl, pool } = await busyPool(3);
    expect(rl.window.count).toBeGreaterThan(3);
    clock.now += HOLD_MS;
    const d = await pool.acquire(1000, rl.lease, clock.now);
    // The three used, plus the new lease: the rest of the first one went back.
    expect(rl.window.count).toBe(3 + d.granted);
  });

  it("a plan change gives back what was leased under the old limit", async () => {
    const { clock, rl, pool } = await busyPool(3);
    const d = await pool.acquire(100, rl.lease, clock.now);
    expect(d.limit).toBe(100);
    expect(rl.window.count).toBeLessThanOrEqual(4 + 9);
  });

  it("a request refused by the object spends a slot that a concurrent request's lease brought back meanwhile", async () => {
    const window = new SlidingWindow();
    const pool = new PermitPool();
    const now = 5_000_000;
    // Teach the pool a fast rate (on another window), so its next lease asks for several slots.
    const warmup = new SlidingWindow();
    for (let i = 0; i < 3; i++) await pool.acquire(20, async (req) => warmup.lease({ ...req, want: 1 }, now + i), now + i);
    for (let i = 0; i < 18; i++) window.take(20, now);
    const pending: Array<() => void> = [];
    const deferred = (req: LeaseRequest) => new Promise<ReturnType<SlidingWindow["lease"]>>((resolve) => pending.push(() => resolve(window.lease(req, now + 10))));
    const first = pool.acquire(20, deferred, now + 10);
    const second = pool.acquire(20, deferred, now + 10);
    // The first lease is answered (the last two slots: one used, one held), then the second, refused by the full window...
    pending[0]!();
    const a = await first;
    expect(a).toMatchObject({ allowed: true, granted: 2 });
    pending[1]!();
    // ...yet the slot the first lease brought is spare by then, so the second is served from it.
    expect((await second).allowed).toBe(true);
    expect(window.count).toBe(20);
    expect((await pool.acquire(20, async (req) => window.lease(req, now + 20), now + 20)).allowed).toBe(false);
  });
});
