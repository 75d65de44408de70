// A business portfolio's shared messaging-limit window over node:sqlite, and a session's side of it:
// unique recipients counted once for all the portfolio's sessions, the window's memory bounded by the tier.
import { describe, expect, it } from "vitest";
import { memorySql } from "./memory-sql.ts";
import { LimitState } from "../../src/messaging/sessions/limits.ts";
import { MAX_RECIPIENTS_PER_CALL, PortfolioWindow, portfolioName } from "../../src/messaging/sessions/portfolio.ts";
import { DAY_MS, NO_LIMITS } from "../../src/messaging/send-limits.ts";

describe("portfolio window", () => {
  it("counts each new recipient once up to the limit; a known one is admitted free; refused ones learn when the oldest leaves", () => {
    const w = new PortfolioWindow(memorySql());
    expect(w.admit(["a", "b"], 3, 1_000)).toEqual({ admitted: ["a", "b"], until: 1_000 + DAY_MS });
    // Another session of the portfolio: "a" is already counted, "c" takes the last place, "d" waits.
    expect(w.admit(["a", "c", "d"], 3, 2_000)).toEqual({ admitted: ["a", "c"], until: 1_000 + DAY_MS });
    expect(w.state(2_000)).toEqual({ reached: 3, oldest: 1_000 });
    // A day after the first two, their places are free again.
    expect(w.admit(["d", "e", "f"], 3, 1_000 + DAY_MS)).toEqual({ admitted: ["d", "e"], until: 2_000 + DAY_MS });
  });

  it("is bounded: one call asks about at most MAX_RECIPIENTS_PER_CALL, duplicates count once, rows never exceed the limit", () => {
    const w = new PortfolioWindow(memorySql());
    const many = Array.from({ length: MAX_RECIPIENTS_PER_CALL * 3 }, (_, i) => `r${i}`);
    expect(w.admit(many, 1_000_000, 0).admitted).toHaveLength(MAX_RECIPIENTS_PER_CALL);
    expect(w.admit(["x", "x", "x"], 1_000_000, 0).admitted).toEqual(["x"]);
    const small = new PortfolioWindow(memorySql());
    small.admit(many.slice(0, 150), 10, 0);
    expect(small.state(0).reached).toBe(10);
  });

  it("names an object per account and portfolio: two accounts with the same businessAccountId never share one", () => {
    expect(portfolioName("acc_a", "1022")).not.toBe(portfolioName("acc_b", "1022"));
  });
});

describe("a session's side of a shared window", () => {
  const limits = { ...NO_LIMITS, messagingLimit: 2 };

  it("admits what the portfolio admitted and remembers it; refuses the rest until the portfolio says", () => {
    const s = new LimitState(memorySql());
    const shared = { admitted: new Set(["a"]), until: 5_000 };
    expect(s.admit(limits, "a", true, 0, shared)).toEqual({ ok: true });
    expect(s.admit(limits, "b", true, 0, shared)).toEqual({ ok: false, limit: "messaging", until: 5_000 });
    // Known now: no call needed, and no place taken again.
    expect(s.unknownOf(["a", "b"], 1)).toEqual(["b"]);
    expect(s.admit(limits, "a", true, 1, { admitted: new Set(), until: 1 })).toEqual({ ok: true });
    // The session does not count by itself: three recipients the portfolio admitted pass a local limit of 2.
    const all = { admitted: new Set(["c", "d", "e"]), until: 0 };
    expect(["c", "d", "e"].map((to) => s.admit(limits, to, true, 2, all).ok)).toEqual([true, true, true]);
    expect(s.unknownOf(["a"], DAY_MS + 1)).toEqual(["a"]);
  });

  it("eta: the shared window's use counts, not the session's own", () => {
    const s = new LimitState(memorySql());
    const now = 10 * DAY_MS;
    // Nothing reached by this session, but the portfolio's two places are taken since an hour ago.
    expect(s.finishEstimate(limits, 1, now, now)).toBe(now);
    expect(s.finishEstimate(limits, 1, now, now, { reached: 2, oldest: now - 3_600_000 })).toBe(now - 3_600_000 + DAY_MS);
    expect(s.finishEstimate(limits, 3, now, now, { reached: 2, oldest: now - 3_600_000 })).toBe(now - 3_600_000 + 2 * DAY_MS);
  });
});
