import { describe, expect, it } from "vitest";
import { memorySql } from "./memory-sql.ts";
import { Outbox, paceSlots, type SqlLike } from "../../src/messaging/sessions/outbox.ts";

const dues = (o: Outbox, now = Number.MAX_SAFE_INTEGER) => o.due(now, 1000).map((r) => r.message_id);

describe("paceSlots: the one pacing rule", () => {
  it("spreads items one interval apart from the slot, never before now, and answers the next slot", () => {
    const placed: [string, number][] = [];
    const next = paceSlots(["a", "b", "c"], { rate: 60, jitter: 0 }, 1000, 5000, (id, due) => (placed.push([id, due]), true));
    expect(placed).toEqual([["a", 5000], ["b", 6000], ["c", 7000]]);
    expect(next).toBe(8000);
  });

  it("an item not placed takes no slot; without a rate everything is due now", () => {
    const placed: [string, number][] = [];
    expect(paceSlots(["a", "b", "c"], { rate: 60, jitter: 0 }, 0, 0, (id, due) => id !== "b" && placed.push([id, due]) > 0)).toBe(2000);
    expect(placed).toEqual([["a", 0], ["c", 1000]]);
    const now: number[] = [];
    expect(paceSlots(["x", "y"], { rate: null, jitter: 0.25 }, 42, 42, (_, due) => now.push(due) > 0)).toBe(42);
    expect(now).toEqual([42, 42]);
  });

  it("jitter stays within +/- its share of the interval", () => {
    const seen: number[] = [];
    paceSlots(["a", "b"], { rate: 60, jitter: 0.5 }, 0, 10_000, (_, due) => seen.push(due) > 0, () => 0);
    expect(seen).toEqual([9500, 10500]);
    seen.length = 0;
    paceSlots(["a"], { rate: 60, jitter: 0.5 }, 0, 10_000, (_, due) => seen.push(due) > 0, () => 0.999999);
    expect(seen[0]).toBeLessThanOrEqual(10_500);
  });
});

describe("Outbox over SQLite", () => {
  it("queues ids once (a retried enqueue takes no slot) and paces them at the rate", () => {
    const o = new Outbox(memorySql());
    o.enqueue(["m1", "m2"], { rate: 60, jitter: 0 }, null, 1000);
    o.enqueue(["m2", "m3"], { rate: 60, jitter: 0 }, null, 1000);
    expect(dues(o, 1000)).toEqual(["m1"]);
    expect(dues(o, 2000)).toEqual(["m1", "m2"]);
    expect(dues(o)).toEqual(["m1", "m2", "m3"]);
    expect(o.nextSlot(0)).toBe(4000);
    expect(o.nextDue()).toBe(1000);
  });

  it("held campaigns are not due; release re-paces their sends in order from the next slot", () => {
    const o = new Outbox(memorySql());
    o.enqueue(["c1", "c2"], { rate: null, jitter: 0 }, "cmp_a", 0);
    o.enqueue(["x"], { rate: null, jitter: 0 }, null, 0);
    o.hold(["cmp_a"]);
    expect(o.isHeld("cmp_a")).toBe(true);
    expect(dues(o)).toEqual(["x"]);
    o.release("cmp_a", { rate: 30, jitter: 0 }, 10_000);
    expect(o.isHeld("cmp_a")).toBe(false);
    expect(dues(o, 10_000)).toEqual(["x", "c1"]);
    expect(dues(o, 12_000)).toEqual(["x", "c1", "c2"]);
  });

  it("drop forgets a campaign's queued sends, hold and timer, but keeps those in flight", () => {
    const o = new Outbox(memorySql());
    o.enqueue(["c1", "c2", "c3"], { rate: null, jitter: 0 }, "cmp_a", 0);
    o.hold(["cmp_a"]);
    o.setTimer("cmp_a", 50);
    expect(o.drop("cmp_a", new Set(["c2"]))).toEqual(["c2"]);
    expect(o.queuedIds()).toEqual(["c2"]);
    expect(o.isHeld("cmp_a")).toBe(false);
    expect(o.dueTimers(100)).toEqual([]);
  });

  it("hasQueued says whether any send of a campaign is still here (held ones too), until the last goes", () => {
    const o = new Outbox(memorySql());
    o.enqueue(["c1", "c2"], { rate: null, jitter: 0 }, "cmp_a", 0);
    o.enqueue(["x1"], { rate: null, jitter: 0 }, null, 0);
    o.hold(["cmp_a"]);
    expect([o.hasQueued("cmp_a"), o.hasQueued("cmp_b")]).toEqual([true, false]);
    o.remove(["c1"]);
    expect(o.hasQueued("cmp_a")).toBe(true);
    o.remove(["c2"]);
    expect(o.hasQueued("cmp_a")).toBe(false);
  });

  it("campaign timers fire when due and count for the next alarm", () => {
    const o = new Outbox(memorySql());
    o.setTimer("cmp_a", 500);
    o.setTimer("cmp_b", 900);
    expect(o.nextDue()).toBe(500);
    expect(o.dueTimers(600)).toEqual(["cmp_a"]);
    o.cancelTimer("cmp_a");
    expect(o.nextDue()).toBe(900);
  });

  it("retryLater moves a send and counts its attempts; remove and clear empty it", () => {
    const o = new Outbox(memorySql());
    o.enqueue(["m1", "m2"], { rate: null, jitter: 0 }, null, 0);
    o.retryLater("m1", 5000, 2);
    expect(o.due(100, 10)).toEqual([{ message_id: "m2", attempts: 0, campaign_id: null }]);
    expect(o.due(5000, 10).find((r) => r.message_id === "m1")?.attempts).toBe(2);
    o.remove(["m2"]);
    expect(o.queuedIds()).toEqual(["m1"]);
    o.clear();
    expect(o.nextDue()).toBeNull();
  });

  it("opens an existing outbox of the first release (no campaign column) and adds it", () => {
    const sql = memorySql();
    sql.exec("CREATE TABLE outbox (message_id TEXT PRIMARY KEY, due INTEGER NOT NULL, attempts INTEGER NOT NULL DEFAULT 0)");
    sql.exec("INSERT INTO outbox (message_id, due) VALUES ('old', 0)");
    const o = new Outbox(sql);
    expect(o.due(0, 10)).toEqual([{ message_id: "old", attempts: 0, campaign_id: null }]);
  });

  it("a late alarm slips the paced queue instead of sending it in a burst", () => {
    const o = new Outbox(memorySql());
    o.enqueue(["p1", "p2", "p3"], { rate: 600, jitter: 0 }, null, 1000); // due 1000, 1100, 1200
    o.slipLate(1030); // within the tolerance: nothing moves
    expect(dues(o, 1100)).toEqual(["p1", "p2"]);
    o.slipLate(3000); // the alarm ran 2 s late
    expect(dues(o, 3000)).toEqual(["p1"]);
    expect(dues(o, 3100)).toEqual(["p1", "p2"]);
    expect(dues(o, 3200)).toEqual(["p1", "p2", "p3"]);
    o.enqueue(["p4"], { rate: 600, jitter: 0 }, null, 3000); // the next slot moved too
    expect(dues(o, 3299)).not.toContain("p4");
    expect(dues(o, 3300)).toContain("p4");
  });

  it("a late alarm leaves an unpaced backlog where it is: no row rewritten, however long the backlog", () => {
    let written = 0;
    const sql = memorySql();
    const counting: SqlLike = {
      exec: (query, ...bindings) => {
        const res = sql.exec(query, ...bindings);
        written += res.rowsWritten;
        return res;
      },
    } as SqlLike;
    const o = new Outbox(counting);
    o.enqueue(Array.from({ length: 500 }, (_, i) => `u${i}`), { rate: null, jitter: 0 }, "c", 1000);
    o.enqueue(["p1", "p2"], { rate: 600, jitter: 0 }, null, 1000); // due 1000, 1100
    written = 0;
    o.slipLate(3000); // the alarm ran 2 s late: only the two paced sends move
    expect(written).toBe(3); // p1, p2 and the next free slot
    expect(dues(o, 2000)).toHaveLength(500); // the unpaced backlog is still due
    expect(dues(o, 2999)).not.toContain("p1");
    expect(dues(o, 3100)).toEqual(expect.arrayContaining(["p1", "p2"]));
  });
});

describe("outbox: sends waiting for the messaging limit", () => {
  it("a change of limits wakes only them: paced, pair-rate and backed-off sends keep their times", () => {
    const o = new Outbox(memorySql());
    o.queueAt(["tier"], 86_400_000, null, true);
    o.queueAt(["pair"], 6_000, null);
    o.enqueue(["paced"], { rate: 1, jitter: 0 }, null, 60_000);
    o.queueAt(["retried"], 1_000, null);
    o.retryLater("retried", 86_400_000, 1);
    o.queueAt(["tier2"], 1_000, null);
    o.retryLater("tier2", 86_400_000, 0, true);
    expect(o.wakeLimitWaits(100)).toBe(2);
    expect(dues(o, 100).sort()).toEqual(["tier", "tier2"]);
    // Woken once: a second change finds none, and a send deferred again for another limit is not marked.
    expect(o.wakeLimitWaits(200)).toBe(0);
    expect(dues(o).sort()).toEqual(["paced", "pair", "retried", "tier", "tier2"]);
  });
});
