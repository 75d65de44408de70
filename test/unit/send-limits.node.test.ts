// The Session DO's sending limits over node:sqlite: each limit holds a send back until exactly when it allows it.
import { describe, expect, it } from "vitest";
import { memorySql } from "./memory-sql.ts";
import { LimitState } from "../../src/messaging/sessions/limits.ts";
import { DAY_MS, limitsFor, META_LIMITS, NO_LIMITS, type SendLimits } from "../../src/messaging/send-limits.ts";

const only = (l: Partial<SendLimits>): SendLimits => ({ ...NO_LIMITS, ...l });

describe("send limits", () => {
  it("throughput: N per second, the next one waits for the next second", () => {
    const s = new LimitState(memorySql());
    const limits = only({ throughputPerSecond: 3 });
    const t = 10_000_200;
    expect([1, 2, 3].map((i) => s.admit(limits, `r${i}`, false, t).ok)).toEqual([true, true, true]);
    expect(s.admit(limits, "r4", false, t + 500)).toEqual({ ok: false, limit: "throughput", until: 10_001_000 });
    expect(s.admit(limits, "r4", false, 10_001_000).ok).toBe(true);
  });

  it("pair rate: a burst, then one per interval to the same recipient; others are not affected", () => {
    const s = new LimitState(memorySql());
    const limits = only({ pairIntervalMs: 6_000, pairBurst: 2 });
    expect(s.admit(limits, "a", false, 0).ok).toBe(true);
    expect(s.admit(limits, "a", false, 0).ok).toBe(true);
    expect(s.admit(limits, "a", false, 1_000)).toEqual({ ok: false, limit: "pair", until: 6_000 });
    expect(s.admit(limits, "b", false, 1_000).ok).toBe(true);
    expect(s.admit(limits, "a", false, 6_000).ok).toBe(true);
    expect(s.admit(limits, "a", false, 6_000)).toMatchObject({ ok: false, until: 12_000 });
    // Meta refused one (131056): the bucket is empty from then.
    s.pairExhausted("b", 2_000);
    expect(s.admit(limits, "b", false, 3_000)).toEqual({ ok: false, limit: "pair", until: 8_000 });
  });

  it("a person's move (new number, number now known) takes their pair bucket and messaging-limit count with them", () => {
    const s = new LimitState(memorySql());
    const limits = only({ pairIntervalMs: 6_000, pairBurst: 1, messagingLimit: 2 });
    expect(s.admit(limits, "US.5050", true, 0).ok).toBe(true);
    expect(s.admit(limits, "b", true, 0).ok).toBe(true);
    s.renameRecipient("US.5050", "16505554321");
    expect(s.reached()).toBe(2);
    // The same person under the new address: not a third recipient, and their bucket is still empty.
    expect(s.admit(limits, "16505554321", true, 1_000)).toEqual({ ok: false, limit: "pair", until: 6_000 });
    expect(s.admit(limits, "16505554321", true, 6_000).ok).toBe(true);
    expect(s.admit(limits, "US.5050", true, 12_000)).toMatchObject({ ok: false, limit: "messaging" });
  });

  it("messaging limit: unique recipients outside the window per rolling 24 h; a known one and in-window sends are free", () => {
    const s = new LimitState(memorySql());
    const limits = only({ messagingLimit: 2 });
    expect(s.admit(limits, "a", true, 1_000).ok).toBe(true);
    expect(s.admit(limits, "b", true, 2_000).ok).toBe(true);
    expect(s.admit(limits, "a", true, 3_000).ok).toBe(true);
    expect(s.admit(limits, "c", false, 3_000).ok).toBe(true);
    expect(s.admit(limits, "c", true, 3_000)).toEqual({ ok: false, limit: "messaging", until: 1_000 + DAY_MS });
    expect(s.admit(limits, "c", true, 1_000 + DAY_MS).ok).toBe(true);
    expect(s.reached()).toBe(2);
  });

  it("the finish estimate: throughput, and whole days of the messaging limit", () => {
    const s = new LimitState(memorySql());
    expect(s.finishEstimate(only({ throughputPerSecond: 10 }), 100, 0, 1_000)).toBe(11_000);
    const tier = only({ messagingLimit: 2 });
    s.admit(tier, "a", true, 5_000);
    // One left today, then two a day: five more take the rest of today and two more days.
    expect(s.finishEstimate(tier, 5, 0, 6_000)).toBe(5_000 + 2 * DAY_MS);
  });

  it("defaults: Meta's for whatsapp, none for the sandbox; a session's settings override", () => {
    expect(limitsFor("whatsapp", undefined)).toEqual(META_LIMITS);
    expect(limitsFor("sandbox", undefined)).toEqual(NO_LIMITS);
    expect(limitsFor("whatsapp", { messagingLimit: "unlimited", throughputPerSecond: 1000 })).toMatchObject({ messagingLimit: null, throughputPerSecond: 1000, pairIntervalMs: 6_000 });
    expect(limitsFor("sandbox", { pairIntervalMs: 500 })).toMatchObject({ pairIntervalMs: 500, pairBurst: 1 });
  });

  it("state stays bounded: idle pair buckets and reach older than 24 h are pruned", () => {
    const sql = memorySql();
    const s = new LimitState(sql);
    const limits = only({ pairIntervalMs: 10, pairBurst: 1, messagingLimit: 1000 });
    for (let i = 0; i < 500; i++) s.admit(limits, `r${i}`, true, i);
    s.admit(limits, "last", true, DAY_MS + 1_000);
    expect(sql.exec<{ n: number }>("SELECT count(*) AS n FROM limit_pair").one().n).toBe(1);
    expect(s.reached()).toBe(1);
  });
});
