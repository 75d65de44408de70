import { DatabaseSync } from "node:sqlite";
import { describe, expect, it } from "vitest";
import { memorySql } from "./memory-sql.ts";
import type { MessageRow } from "../../src/messaging/messages/mapper.ts";
import { WriteBuffer } from "../../src/messaging/sessions/write-buffer.ts";

const T0 = 1_800_000_000_000;
/** An outbound row as store/rows.ts builds it (built here: that file's imports need the Workers types). */
function outboundRow(m: { id: string; accountId: string; sessionId: string; to: string; type: "text"; text?: string; createdAt: number }, state: { status: "pending" } | { status: "sent"; sentAt: number }): MessageRow {
  return {
    id: m.id, accountId: m.accountId, sessionId: m.sessionId, chatId: `${m.to}@c.us`, direction: "outbound", type: m.type, text: m.text ?? null, template: null, media: null, content: null, reactions: null,
    status: state.status, errorCode: null, errorMessage: null, externalId: null, replyTo: null, batchId: null, campaignId: null, createdAt: m.createdAt,
    sentAt: state.status === "sent" ? state.sentAt : null, deliveredAt: null, readAt: null,
  };
}
const sent = (id: string, at = T0): MessageRow => outboundRow({ id, accountId: "acc_1", sessionId: "ses_1", to: "14155550123", type: "text", text: `hi ${id}`, createdAt: at }, { status: "sent", sentAt: at });
const payloadOf = (e: { payload: string }) => JSON.parse(e.payload) as { type: string; sequence: number; statusOrdinal?: number; data: { id: string; status: string } };

describe("WriteBuffer: the Session DO's writes until their group commit", () => {
  it("a send: its row and its message.sent event wait for D1; committed, nothing waits", () => {
    const b = new WriteBuffer(memorySql());
    const [event] = b.add(sent("msg_1"), T0);
    expect(payloadOf(event!)).toMatchObject({ type: "message.sent", sequence: 1, statusOrdinal: 1, data: { id: "msg_1", status: "sent" } });
    expect(b.size()).toBe(2);
    const batch = b.pending(100);
    expect(batch.messages.map((m) => m.id)).toEqual(["msg_1"]);
    expect(batch.events.map((e) => e.id)).toEqual([event!.id]);
    b.committed(batch);
    expect(b.size()).toBe(0);
    expect(b.pending(100)).toEqual({ messages: [], events: [], lastSeq: 0, lastChg: 0 });
    expect(b.known(["msg_1"])[0]).toMatchObject({ id: "msg_1", status: "sent" });
  });

  it("receipts move forward only, one event per step, each with the next sequence and its status ordinal", () => {
    const b = new WriteBuffer(memorySql());
    b.add(sent("msg_1"), T0);
    // read before delivered: passes through delivered, stamped once each
    const read = b.advance({ ids: ["msg_1"] }, "read", T0 + 5);
    expect(read.events.map((e) => [payloadOf(e).type, payloadOf(e).sequence, payloadOf(e).statusOrdinal])).toEqual([["message.delivered", 2, 2], ["message.read", 3, 3]]);
    expect(read.changed[0]).toMatchObject({ status: "read", deliveredAt: T0 + 5, readAt: T0 + 5 });
    // a late delivered, a replayed read, a failure after delivery: nothing changes, nothing is announced
    for (const target of ["delivered", "read", "failed"] as const) {
      const late = b.advance({ ids: ["msg_1"] }, target, T0 + 9, { code: "x", message: "y" });
      expect(late).toEqual({ changed: [], unknown: [], events: [] });
    }
    expect(b.known(["msg_1"])[0]).toMatchObject({ status: "read", errorCode: null });
  });

  it("a read passing through delivered takes the delivery's own time when the caller knows it (never after the read)", () => {
    const b = new WriteBuffer(memorySql());
    b.add(sent("msg_1"), T0);
    b.add(sent("msg_2"), T0);
    const read = b.advance({ ids: ["msg_1"] }, "read", T0 + 5, undefined, { deliveredAt: T0 + 3 });
    expect(read.changed[0]).toMatchObject({ status: "read", deliveredAt: T0 + 3, readAt: T0 + 5 });
    expect(read.events.map((e) => [payloadOf(e).type, payloadOf(e).data.status])).toEqual([["message.delivered", "delivered"], ["message.read", "read"]]);
    expect(b.advance({ ids: ["msg_2"] }, "read", T0 + 5, undefined, { deliveredAt: T0 + 9 }).changed[0]).toMatchObject({ deliveredAt: T0 + 5, readAt: T0 + 5 });
  });

  it("keys it does not know come back as unknown (their rows are only in D1); external ids select too", () => {
    const b = new WriteBuffer(memorySql());
    b.add({ ...sent("msg_1"), externalId: "wamid.1" }, T0);
    const r = b.advance({ externalIds: ["wamid.1", "wamid.2"] }, "delivered", T0 + 1);
    expect(r.changed.map((m) => m.id)).toEqual(["msg_1"]);
    expect(r.unknown).toEqual(["wamid.2"]);
    expect(b.advance({ ids: ["msg_9"] }, "read", T0).unknown).toEqual(["msg_9"]);
  });

  it("queued rows taken over already sent: one dirty row and one event each; a row the buffer knows moves from its own copy", () => {
    const b = new WriteBuffer(memorySql());
    const queued = (id: string) => outboundRow({ id, accountId: "acc_1", sessionId: "ses_1", to: "1", type: "text", createdAt: T0 }, { status: "pending" });
    b.add(sent("msg_k"), T0); // known, and further along than D1's pending copy
    b.advance({ ids: ["msg_k"] }, "delivered", T0 + 1);
    const out = b.adopt([queued("msg_a"), queued("msg_b"), queued("msg_k")], "sent", T0 + 5);
    expect(out.changed.map((r) => [r.id, r.status, r.sentAt])).toEqual([["msg_a", "sent", T0 + 5], ["msg_b", "sent", T0 + 5]]);
    expect(out.events.map((e) => [payloadOf(e).type, payloadOf(e).data.id])).toEqual([["message.sent", "msg_a"], ["message.sent", "msg_b"]]);
    expect(b.known(["msg_k"])[0]!.status).toBe("delivered");
    expect(b.pending(10).messages.map((m) => [m.id, (JSON.parse(m.json) as MessageRow).status]).sort()).toEqual([["msg_a", "sent"], ["msg_b", "sent"], ["msg_k", "delivered"]]);
    const failed = b.adopt([queued("msg_f")], "failed", T0 + 6, { code: "no_account", message: "x" });
    expect(failed.changed[0]).toMatchObject({ status: "failed", errorCode: "no_account" });
    expect(failed.events).toEqual([]);
  });

  it("a row that changed while its commit was under way stays to commit again; events committed are gone, later ones stay", () => {
    const b = new WriteBuffer(memorySql());
    b.add(sent("msg_1"), T0);
    const batch = b.pending(100);
    b.advance({ ids: ["msg_1"] }, "delivered", T0 + 1); // during the D1 round trip
    b.committed(batch);
    const next = b.pending(100);
    expect(next.messages.map((m) => (JSON.parse(m.json) as MessageRow).status)).toEqual(["delivered"]);
    expect(next.events.map((e) => payloadOf(e).type)).toEqual(["message.delivered"]);
  });

  it("a commit takes at most `limit` of each, oldest first", () => {
    const b = new WriteBuffer(memorySql());
    for (let i = 0; i < 5; i++) b.add(sent(`msg_${i}`, T0 + i), T0 + i);
    const first = b.pending(2);
    expect(first.events.map((e) => payloadOf(e).data.id)).toEqual(["msg_0", "msg_1"]);
    b.committed(first);
    expect(b.pending(10).events.map((e) => payloadOf(e).data.id)).toEqual(["msg_2", "msg_3", "msg_4"]);
  });

  it("after a restart (same storage) the buffered writes are still there and the sequence goes on", () => {
    const db = new DatabaseSync(":memory:");
    const before = new WriteBuffer(memorySql(db));
    before.add(sent("msg_1"), T0);
    const after = new WriteBuffer(memorySql(db));
    expect(after.size()).toBe(2);
    const [e] = after.advance({ ids: ["msg_1"] }, "delivered", T0 + 1).events;
    expect(payloadOf(e!).sequence).toBe(2);
  });

  it("prune forgets clean rows unchanged for long, never a row D1 does not have yet", () => {
    const b = new WriteBuffer(memorySql());
    b.add(sent("msg_old"), T0);
    b.committed(b.pending(10));
    b.add(sent("msg_dirty"), T0);
    b.prune(T0 + 60 * 60_000);
    expect(b.known(["msg_old", "msg_dirty"]).map((m) => m.id)).toEqual(["msg_dirty"]);
  });

  // 20,010 rows: a few seconds on an idle machine, over 13 on a loaded one; a cost growing with the square would pass no bound.
  it("over its bound, prune forgets rows that are done before rows still waiting for receipts", { timeout: 60_000 }, () => {
    const b = new WriteBuffer(memorySql(), () => T0);
    const queued = (id: string) => outboundRow({ id, accountId: "acc_1", sessionId: "ses_1", to: "1", type: "text", createdAt: T0 }, { status: "pending" });
    // 5 sends waiting for their receipts, then 20,005 read (one bound's worth and 5 more), all committed
    const ids = Array.from({ length: 20_010 }, (_, i) => `msg_${String(i).padStart(5, "0")}`);
    b.adopt(ids.map(queued), "sent", T0);
    b.committed(b.pending(30_000));
    b.advance({ ids: ids.slice(5) }, "read", T0 + 1_000);
    b.committed(b.pending(30_000));
    b.prune(T0 + 2_000);
    // the oldest of all are the 5 waiting ones: they stay, the 5 oldest read ones go
    expect(b.known(ids.slice(0, 12)).map((m) => m.id)).toEqual(ids.slice(0, 5).concat(ids.slice(10, 12)));
    expect(b.advance({ ids: ids.slice(0, 5) }, "delivered", T0 + 3_000).unknown).toEqual([]);
  });

  it("an event over the size bound throws (413) and records nothing of the send", () => {
    const b = new WriteBuffer(memorySql());
    const huge = { ...sent("msg_big"), text: "x".repeat(300 * 1024) };
    expect(() => b.add(huge, T0)).toThrow(expect.objectContaining({ code: "event_too_large", status: 413 }));
    expect(b.known(["msg_big"])).toEqual([]);
    expect(b.size()).toBe(0);
  });
  it("a commit rewrites no row: it moves the mark; the flush reads the changes above it through their index (query plan)", () => {
    const db = new DatabaseSync(":memory:");
    const inner = memorySql(db);
    const seen: string[] = [];
    const b = new WriteBuffer({ exec: (q: string, ...args: unknown[]) => (seen.push(q), inner.exec(q, ...(args as []))) } as typeof inner);
    for (let i = 0; i < 5; i++) b.add(sent(`msg_${i}`), T0 + i);
    seen.length = 0;
    b.committed(b.pending(2));
    expect(seen.filter((q) => /^(UPDATE|INSERT INTO|DELETE FROM) wb_rows/.test(q))).toEqual([]);
    const flush = seen.find((q) => q.startsWith("SELECT id, row AS json, chg FROM wb_rows"))!;
    const plan = db.prepare(`EXPLAIN QUERY PLAN ${flush}`).all(0, 10).map((r) => String((r as { detail: string }).detail));
    expect(plan.join(" | ")).toMatch(/USING INDEX wb_rows_chg \(chg>\?\)/);
    expect(plan.join(" | ")).not.toMatch(/TEMP B-TREE/);
    expect(b.pending(10).messages.map((m) => m.id)).toEqual(["msg_2", "msg_3", "msg_4"]);
  });

  it("a receipt stamped hours ago (a late webhook) does not make the rows changed now look old to pruning", () => {
    let clock = T0;
    const db = new DatabaseSync(":memory:");
    new WriteBuffer(memorySql(db), () => clock).add(sent("msg_1"), T0);
    // restarted: the first change it makes is the late receipt
    const b = new WriteBuffer(memorySql(db), () => clock);
    b.advance({ ids: ["msg_1"] }, "delivered", T0 - 3 * 3600_000);
    b.committed(b.pending(10));
    b.prune(T0);
    clock = T0 + 60_000;
    b.prune(T0 + 60_000);
    expect(b.known(["msg_1"]).map((m) => m.id)).toEqual(["msg_1"]);
    clock = T0 + 20 * 60_000;
    b.prune(T0 + 20 * 60_000);
    expect(b.known(["msg_1"])).toEqual([]);
  });

  it("after a restart whose rows were all pruned, new changes still wait for D1 (numbered above the mark)", () => {
    const db = new DatabaseSync(":memory:");
    const before = new WriteBuffer(memorySql(db));
    for (let i = 0; i < 3; i++) before.add(sent(`msg_${i}`), T0);
    before.committed(before.pending(10));
    before.prune(T0 + 60 * 60_000);
    expect(before.known(["msg_0", "msg_1", "msg_2"])).toEqual([]);
    const after = new WriteBuffer(memorySql(db));
    after.add(sent("msg_new"), T0 + 60 * 60_000);
    expect(after.pending(10).messages.map((m) => m.id)).toEqual(["msg_new"]);
  });

  it("storage from before the change counter: its dirty rows wait for D1 in their old order, its clean ones are known and do not", () => {
    const db = new DatabaseSync(":memory:");
    db.exec("CREATE TABLE wb_messages (id TEXT PRIMARY KEY, external_id TEXT, row TEXT NOT NULL, dirty INTEGER NOT NULL, ver INTEGER NOT NULL, touched INTEGER NOT NULL)");
    const put = db.prepare("INSERT INTO wb_messages VALUES (?, ?, ?, ?, 1, ?)");
    put.run("msg_clean", null, JSON.stringify(sent("msg_clean")), 0, T0);
    put.run("msg_late", "wamid.9", JSON.stringify({ ...sent("msg_late"), externalId: "wamid.9" }), 1, T0 + 9);
    put.run("msg_early", null, JSON.stringify({ ...sent("msg_early"), status: "read", readAt: T0 }), 1, T0 + 1);
    const b = new WriteBuffer(memorySql(db));
    expect(b.size()).toBe(2);
    expect(b.pending(10).messages.map((m) => m.id)).toEqual(["msg_early", "msg_late"]);
    expect(b.known(["msg_clean"]).map((m) => m.id)).toEqual(["msg_clean"]);
    expect(b.advance({ externalIds: ["wamid.9"] }, "delivered", T0 + 10).changed.map((m) => m.id)).toEqual(["msg_late"]);
    expect(db.prepare("SELECT count(*) AS n FROM sqlite_master WHERE name = 'wb_messages'").get()).toEqual({ n: 0 });
    // a second start finds nothing to move
    expect(new WriteBuffer(memorySql(db)).size()).toBe(3);
  });
});
