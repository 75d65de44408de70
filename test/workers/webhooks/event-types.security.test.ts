import { describe, expect, it } from "vitest";
import { getDb } from "../../../src/db/client.ts";
import { events, webhookDeliveries } from "../../../src/db/schema/index.ts";
import { fanOut } from "../../../src/events/fanout.ts";
import { recordInbound } from "../../../src/messaging/sessions/inbound.ts";
import { newId } from "../../../src/platform/ids.ts";
import { and, eq } from "drizzle-orm";
import { json, sandboxSession, type MessageJson } from "../messaging/support.ts";
import { api, createKey, env, registerWebhook } from "./support.ts";
import { about, arrival, delivered, settle } from "./event-types.support.ts";
import { accountShard } from "../../../src/platform/shards.ts";

describe("webhooks: events never cross accounts or reach webhooks they do not belong to", () => {
  it("a message to the number of another account's sandbox session does not arrive there", async () => {
    const a = await createKey();
    const b = await createKey();
    const sa = await sandboxSession(a.key);
    const sb = await sandboxSession(b.key);
    const hookA = await registerWebhook(a, { events: ["*"] });
    const hookB = await registerWebhook(b, { events: ["*"] });
    const sent = await json<MessageJson>(await api("/api/messages/send", { method: "POST", key: a.key, json: { sessionId: sa.id, to: sb.me!.chatId, text: "cross-account" } }));
    expect(sent.status).toBe("sent");
    await arrival(hookA, "message.read", sent.id);
    await settle();
    expect(await delivered(hookB)).toEqual([]);
    const history = await json<{ data: unknown[] }>(await api(`/api/messages/${sa.me!.chatId}?sessionId=${sb.id}`, { key: b.key }));
    expect(history.data).toEqual([]);
    expect((await delivered(hookA)).filter((d) => d.type === "message.received")).toEqual([]);
  });

  it("a webhook filtered to another account's session id gets none of that session's events", async () => {
    const a = await createKey();
    const b = await createKey();
    const sb = await sandboxSession(b.key);
    const spy = await registerWebhook(a, { events: ["*"], sessionId: sb.id });
    const own = await registerWebhook(b, { events: ["*"], sessionId: sb.id });
    const inbound = await json<MessageJson>(await api(`/api/sessions/${sb.id}/sandbox/inbound`, { method: "POST", key: b.key, json: { from: "+15557770002", text: "private" } }));
    const sent = await json<MessageJson>(await api("/api/messages/send", { method: "POST", key: b.key, json: { sessionId: sb.id, to: "+14155550177", text: "private too" } }));
    await arrival(own, "message.received", inbound.id);
    await arrival(own, "message.read", sent.id);
    await settle();
    expect(await delivered(spy)).toEqual([]);
    expect(await about(own, "message.sent", sent.id)).toHaveLength(1);
  });

  it("a webhook registered after an event happened does not get it, however late the fan-out runs", async () => {
    const a = await createKey();
    const createdAt = Date.now() - 5_000;
    const id = newId("evt", createdAt);
    const payload = JSON.stringify({ type: "contact.created", timestamp: new Date(createdAt).toISOString(), data: { id: "con_late" } });
    // Recorded, its queue message not yet consumed (as when the queue lags).
    const shard = await accountShard(env, a.accountId);
    await shard.db.insert(events).values({ id, accountId: a.accountId, type: "contact.created", sessionId: null, payload, createdAt });
    const late = await registerWebhook(a, { events: ["*"] });
    expect(await fanOut(shard, [id])).toEqual([]);
    expect(await shard.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.eventId, id))).toEqual([]);
    await settle(500);
    expect(await delivered(late)).toEqual([]);
  });

  it("a replayed inbound records no event at all (none the cron could later find), a new one records both", async () => {
    const a = await createKey();
    const inbound = { externalId: `wamid.${Date.now()}`, from: "15557770003", timestamp: Date.now(), type: "text" as const, text: "once" };
    const queued: string[][] = [];
    const first = await recordInbound(env, a.accountId, "ses_replay", inbound, { enqueue: (records) => queued.push(records.map((r) => r.id)) });
    const again = await recordInbound(env, a.accountId, "ses_replay", { ...inbound, text: "replayed" }, { enqueue: (records) => queued.push(records.map((r) => r.id)) });
    expect(first?.externalId).toBe(inbound.externalId);
    expect(again).toBeNull();
    const recorded = await (await accountShard(env, a.accountId)).db.select({ id: events.id, type: events.type }).from(events).where(and(eq(events.accountId, a.accountId), eq(events.sessionId, "ses_replay")));
    expect(recorded.map((e) => e.type).sort()).toEqual(["contact.created", "message.received"]);
    // Exactly the recorded events were handed over for the queue, once.
    expect(queued).toHaveLength(1);
    expect([...queued[0]!].sort()).toEqual(recorded.map((e) => e.id).sort());
  });
});
