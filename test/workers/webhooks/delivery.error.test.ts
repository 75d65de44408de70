import { createExecutionContext, createMessageBatch, getQueueResult } from "cloudflare:test";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { getDb } from "../../../src/db/client.ts";
import { deadLetters, webhookDeliveries, webhooks } from "../../../src/db/schema/index.ts";
import { onCronEvents } from "../../../src/events/cron.ts";
import { handleEventsQueue } from "../../../src/events/consumers.ts";
import { fanOut } from "../../../src/events/fanout.ts";
import { handleDeadLetters } from "../../../src/queues.ts";
import { api, createKey, deadUrl, deliveriesOf, driveAttempts as driveAttemptsOn, emitEvent, env, receivedAt, recordOnly as recordOnlyOn, registerWebhook, waitFor, waitForDeliveries, type DeliveryLog } from "./support.ts";
import { shardAt } from "../../../src/platform/shards.ts";

/** Accounts of this file live on the second shard (queue messages must name it), except where a test says. */
const SHARD = 1;
const db = () => getDb(env.SHARD_1);
const shard = () => shardAt(env, SHARD);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Waits until the delivery of `eventId` has left `pending`. */
function settled(key: Awaited<ReturnType<typeof createKey>>, webhookId: string, eventId: string, timeoutMs = 15_000): Promise<DeliveryLog> {
  return waitFor(async () => (await deliveriesOf(key, webhookId)).find((d) => d.eventId === eventId && d.status !== "pending"), timeoutMs, `delivery of ${eventId} to settle`);
}

/** An event recorded in D1 whose queue message never went out (or was lost). */
const recordOnly = (accountId: string, createdAt?: number) => recordOnlyOn(shard(), accountId, createdAt);

/** A delivery as the fan-out records it, nothing queued: only the test attempts it. */
async function recordedDelivery(accountId: string): Promise<{ eventId: string; deliveryId: string }> {
  const eventId = await recordOnly(accountId);
  const [deliveryId] = await fanOut(shard(), [eventId]);
  return { eventId, deliveryId: deliveryId! };
}

/** `driveAttempts` (support.ts) on this file's shard. */
const driveAttempts = (deliveryId: string) => driveAttemptsOn(shard(), deliveryId);

describe("webhook deliveries: faults and retries (WEBHOOK_RETRY_SCHEDULE=1,1,1 in tests)", () => {
  it("a receiver answering 500 twice gets the same webhook-id a third time and the log shows every attempt", async () => {
    const k = await createKey("pro", { shard: SHARD });
    const hook = await registerWebhook(k, { events: ["message.sent"] }, { script: [500, 500] });
    const [ev] = await emitEvent({ accountId: k.accountId, type: "message.sent" });
    const got = await waitForDeliveries(hook.inbox, 3);
    expect(got.map((g) => g.webhookId)).toEqual([ev!.id, ev!.id, ev!.id]);
    expect(got.every((g) => g.verified)).toBe(true);
    // The schedule (1 s) is respected between attempts.
    expect(got[1]!.receivedAt - got[0]!.receivedAt).toBeGreaterThanOrEqual(900);
    expect(got[2]!.receivedAt - got[1]!.receivedAt).toBeGreaterThanOrEqual(900);
    const d = await settled(k, hook.id, ev!.id);
    expect(d).toMatchObject({ status: "succeeded", attemptCount: 3, lastStatusCode: 200, lastError: null, nextAttemptAt: null });
    expect(d.attempts.map((a) => a.statusCode)).toEqual([500, 500, 200]);
    expect(d.attempts[0]!.error).toBe("receiver answered 500");
    expect(d.attempts[0]!.nextAttemptAt).not.toBeNull();
    expect(d.attempts[2]!.nextAttemptAt).toBeNull();
    await sleep(1200);
    expect(await receivedAt(hook.inbox)).toHaveLength(3);
  });

  it("a receiver that times out is retried, and the attempt records the timeout", async () => {
    const k = await createKey("pro", { shard: SHARD });
    const hook = await registerWebhook(k, { events: ["*"] }, { script: ["timeout"], hangMs: 4_000 });
    const ev = await recordedDelivery(k.accountId);
    const { reports } = await driveAttempts(ev.deliveryId);
    expect(reports).toHaveLength(2);
    const d = await settled(k, hook.id, ev.eventId);
    expect(d.status).toBe("succeeded");
    expect(d.attempts[0]).toMatchObject({ attempt: 1, statusCode: null, error: "timed out after 1500 ms" });
    expect(d.attempts[0]!.durationMs).toBeGreaterThanOrEqual(1400);
    expect(d.attempts[1]).toMatchObject({ attempt: 2, statusCode: 200 });
  });

  it("a receiver that is down: every scheduled attempt is made, then the delivery is failed; a manual retry later succeeds", async () => {
    const k = await createKey("pro", { shard: SHARD });
    const created = await api("/api/webhooks", { method: "POST", key: k.key, json: { url: `${deadUrl()}/hook`, events: ["*"] } });
    const hook = (await created.json()) as { id: string };
    const ev = await recordedDelivery(k.accountId);
    const { times } = await driveAttempts(ev.deliveryId);
    // The schedule (1 s each) from each attempt's outcome.
    expect(times.slice(1).map((t, i) => t - times[i]!).every((gap) => gap >= 1000 && gap < 3000)).toBe(true);
    const d = await settled(k, hook.id, ev.eventId);
    expect(d).toMatchObject({ status: "failed", attemptCount: 4, lastStatusCode: null, nextAttemptAt: null });
    expect(d.attempts.map((a) => a.attempt)).toEqual([1, 2, 3, 4]);
    expect(d.attempts.every((a) => a.statusCode === null && a.error!.startsWith("network error"))).toBe(true);
    expect(d.attempts[3]!.nextAttemptAt).toBeNull();
    // Failed deliveries are listed by status.
    expect((await deliveriesOf(k, hook.id, "&status=failed")).map((x) => x.id)).toEqual([d.id]);
    expect(await deliveriesOf(k, hook.id, "&status=succeeded")).toEqual([]);
  });

  it("manual retry re-sends a failed delivery with the same webhook-id", async () => {
    const k = await createKey("pro", { shard: SHARD });
    const hook = await registerWebhook(k, { events: ["*"] }, { script: [500, 500, 500, 500], then: 200 });
    const { eventId, deliveryId } = await recordedDelivery(k.accountId);
    const ev = { id: eventId };
    await driveAttempts(deliveryId);
    const failed = await settled(k, hook.id, ev.id);
    expect(failed).toMatchObject({ status: "failed", attemptCount: 4 });
    const res = await api(`/api/webhooks/${hook.id}/deliveries/${failed.id}/retry`, { method: "POST", key: k.key });
    expect(res.status).toBe(202);
    expect(await res.json()).toMatchObject({ id: failed.id, status: "pending" });
    // The manual retry goes through the real queue, at once.
    const ok = await settled(k, hook.id, ev.id);
    expect(ok).toMatchObject({ status: "succeeded", attemptCount: 5, lastStatusCode: 200 });
    const got = await receivedAt(hook.inbox);
    expect(got).toHaveLength(5);
    expect(new Set(got.map((g) => g.webhookId))).toEqual(new Set([ev.id]));
  });

  it("410 Gone fails the delivery at once and disables the endpoint", async () => {
    const k = await createKey("pro", { shard: SHARD });
    const hook = await registerWebhook(k, { events: ["*"] }, { script: [410] });
    const [ev] = await emitEvent({ accountId: k.accountId });
    const d = await settled(k, hook.id, ev!.id);
    expect(d).toMatchObject({ status: "failed", attemptCount: 1, lastStatusCode: 410 });
    const view = (await (await api(`/api/webhooks/${hook.id}`, { key: k.key })).json()) as { enabled: boolean; disabledReason: string };
    expect(view).toMatchObject({ enabled: false, disabledReason: "gone" });
    // Nothing more goes to it; a manual retry is refused until it is enabled again.
    await emitEvent({ accountId: k.accountId });
    await sleep(1500);
    expect(await receivedAt(hook.inbox)).toHaveLength(1);
    const retry = await api(`/api/webhooks/${hook.id}/deliveries/${d.id}/retry`, { method: "POST", key: k.key });
    expect(retry.status).toBe(409);
    const enable = await api(`/api/webhooks/${hook.id}`, { method: "PUT", key: k.key, json: { enabled: true } });
    expect(await enable.json()).toMatchObject({ enabled: true, disabledReason: null });
  });

  it("honours the receiver's Retry-After when it asks for longer than the schedule", async () => {
    const k = await createKey("pro", { shard: SHARD });
    const hook = await registerWebhook(k, { events: ["*"] }, { script: [503], retryAfter: "3" });
    const ev = await recordedDelivery(k.accountId);
    // driveAttempts checks the retry is not due 1.5 s before its time: on the 1 s schedule it would be.
    const { times } = await driveAttempts(ev.deliveryId);
    expect(times[1]! - times[0]!).toBeGreaterThanOrEqual(3_000);
    expect(await receivedAt(hook.inbox)).toHaveLength(2);
    const d = await settled(k, hook.id, ev.eventId);
    expect(d.attempts.map((a) => a.statusCode)).toEqual([503, 200]);
    expect(Date.parse(d.attempts[0]!.nextAttemptAt!) - Date.parse(d.attempts[0]!.createdAt)).toBe(3_000);
  });

  it("an endpoint failing continuously for WEBHOOK_DISABLE_AFTER_DAYS (5) is disabled; its pending retry then fails", async () => {
    const k = await createKey("pro", { shard: SHARD });
    const hook = await registerWebhook(k, { events: ["*"] }, { then: 500 });
    await db().update(webhooks).set({ failingSince: Date.now() - 5 * 86400_000 - 60_000 }).where(eq(webhooks.id, hook.id));
    const [ev] = await emitEvent({ accountId: k.accountId });
    const d = await settled(k, hook.id, ev!.id);
    expect(d.status).toBe("failed");
    expect(d.attemptCount).toBe(1);
    expect(d.lastError).toMatch(/endpoint disabled \(failing\)/);
    const view = (await (await api(`/api/webhooks/${hook.id}`, { key: k.key })).json()) as { enabled: boolean; disabledReason: string };
    expect(view).toMatchObject({ enabled: false, disabledReason: "failing" });
  });

  it("a success ends the failure streak", async () => {
    const k = await createKey("pro", { shard: SHARD });
    const hook = await registerWebhook(k, { events: ["*"] }, { script: [500] });
    const [ev] = await emitEvent({ accountId: k.accountId });
    await waitFor(async () => (await db().select().from(webhooks).where(eq(webhooks.id, hook.id)).get())?.failingSince !== null, 5_000, "streak start");
    await settled(k, hook.id, ev!.id);
    expect((await db().select().from(webhooks).where(eq(webhooks.id, hook.id)).get())!.failingSince).toBeNull();
  });

  it("waits longer than a queue delay allows (12 h) are kept in D1 and enqueued by the cron when due", async () => {
    const k = await createKey("pro", { shard: SHARD });
    const hook = await registerWebhook(k, { events: ["*"] }, { script: [503], retryAfter: "50000" });
    const [ev] = await emitEvent({ accountId: k.accountId });
    const row = await waitFor(async () => {
      const r = await db().select().from(webhookDeliveries).where(eq(webhookDeliveries.eventId, ev!.id)).get();
      return r && r.attempts === 1 ? r : undefined;
    });
    expect(row.status).toBe("pending");
    expect(row.queuedAt).toBeNull();
    expect(row.nextAttemptAt! - Date.now()).toBeGreaterThan(49_000_000);
    await onCronEvents(env, Date.now());
    await sleep(1000);
    expect(await receivedAt(hook.inbox)).toHaveLength(1); // not due yet: the cron leaves it alone
    // Time passes: the attempt is now due.
    await db().update(webhookDeliveries).set({ nextAttemptAt: Date.now() - 1000 }).where(eq(webhookDeliveries.id, row.id));
    await onCronEvents(env, Date.now());
    const d = await settled(k, hook.id, ev!.id);
    expect(d).toMatchObject({ status: "succeeded", attemptCount: 2 });
  });
});

describe("no loss: crashes, lost messages, redeliveries, dead letters", () => {
  it("an event recorded but never queued is enqueued by the cron and delivered", async () => {
    const k = await createKey("pro", { shard: SHARD });
    const hook = await registerWebhook(k, { events: ["message.sent"] });
    // The webhook existed when the event happened (webhooks only get events from after their creation).
    await db().update(webhooks).set({ createdAt: Date.now() - 4 * 60_000 }).where(eq(webhooks.id, hook.id));
    const id = await recordOnly(k.accountId, Date.now() - 3 * 60_000);
    await sleep(500);
    expect(await receivedAt(hook.inbox)).toEqual([]);
    await onCronEvents(env, Date.now());
    const [got] = await waitForDeliveries(hook.inbox, 1);
    expect(got!.webhookId).toBe(id);
    expect(got!.verified).toBe(true);
  });

  it("a consumer that crashed after the fan-out: the re-delivered batch attempts the recorded deliveries once", async () => {
    const k = await createKey("pro", { shard: SHARD });
    const h1 = await registerWebhook(k, { events: ["*"] });
    const h2 = await registerWebhook(k, { events: ["message.sent"] });
    const id = await recordOnly(k.accountId);
    expect(await fanOut(shard(), [id])).toHaveLength(2); // ...and the consumer died here
    const batch = () => createMessageBatch("texmsg-events", [{ id: "m1", timestamp: Date.now(), attempts: 2, body: { kind: "event", id, shard: SHARD } }]);
    const ctx = createExecutionContext();
    const b1 = batch();
    await handleEventsQueue(b1 as never, env, ctx);
    expect((await getQueueResult(b1, ctx)).explicitAcks).toEqual(["m1"]);
    // A duplicate of the same message changes nothing.
    await handleEventsQueue(batch() as never, env, createExecutionContext());
    await sleep(1000);
    for (const h of [h1, h2]) {
      const got = await receivedAt(h.inbox);
      expect(got.map((g) => g.webhookId)).toEqual([id]);
    }
    const rows = await db().select().from(webhookDeliveries).where(eq(webhookDeliveries.eventId, id));
    expect(rows).toHaveLength(2);
    expect(rows.every((r) => r.status === "succeeded" && r.attempts === 1)).toBe(true);
  });

  it("a batch of 100 (fanned out in parts) delivers every event once and acks every message, a malformed one too", { timeout: 30_000 }, async () => {
    const k = await createKey("pro", { shard: SHARD });
    const hook = await registerWebhook(k, { events: ["message.sent"] });
    const ids: string[] = [];
    for (let i = 0; i < 99; i++) ids.push(await recordOnly(k.accountId));
    const batch = createMessageBatch<{ kind: string; id?: string; shard?: number }>("texmsg-events", [
      ...ids.map((id, i) => ({ id: `m${i}`, timestamp: Date.now(), attempts: 1, body: { kind: "event", id, shard: SHARD } })),
      { id: "bad", timestamp: Date.now(), attempts: 1, body: { kind: "event" } },
    ]);
    const ctx = createExecutionContext();
    await handleEventsQueue(batch as never, env, ctx);
    const result = await getQueueResult(batch, ctx);
    expect(new Set(result.explicitAcks).size).toBe(100);
    expect(result.retryMessages).toEqual([]);
    const got = await waitForDeliveries(hook.inbox, 99);
    expect(new Set(got.map((g) => g.webhookId))).toEqual(new Set(ids));
    expect(got).toHaveLength(99);
  });

  it("an attempt whose consumer died (lease expired, message gone) is picked up by the cron", async () => {
    const k = await createKey("pro", { shard: SHARD });
    const hook = await registerWebhook(k, { events: ["*"] });
    const id = await recordOnly(k.accountId);
    await fanOut(shard(), [id]);
    const past = Date.now() - 5 * 60_000;
    await db().update(webhookDeliveries).set({ leaseUntil: past + 60_000, nextAttemptAt: past, queuedAt: past }).where(eq(webhookDeliveries.eventId, id));
    await onCronEvents(env, Date.now());
    const [got] = await waitForDeliveries(hook.inbox, 1);
    expect(got!.webhookId).toBe(id);
  });

  it("a delivery message that dead-letters is recorded and its delivery marked failed", async () => {
    const k = await createKey("pro", { shard: SHARD });
    await registerWebhook(k, { events: ["*"] }, { then: 500 });
    const id = await recordOnly(k.accountId);
    const [deliveryId] = await fanOut(shard(), [id]);
    const batch = createMessageBatch("texmsg-dlq", [{ id: `dlq-${deliveryId}`, timestamp: Date.now(), attempts: 11, body: { kind: "delivery", id: deliveryId, shard: SHARD } }]);
    await handleDeadLetters(batch, env);
    const row = await db().select().from(webhookDeliveries).where(eq(webhookDeliveries.id, deliveryId!)).get();
    expect(row).toMatchObject({ status: "failed", lastError: "dead-lettered after repeated consumer errors" });
    const dl = await getDb(env.DB).select().from(deadLetters).where(eq(deadLetters.messageId, `dlq-${deliveryId}`)).get();
    expect(dl).toMatchObject({ queue: "delivery", attempts: 11 });
  });

  it("1,000 events from two accounts: each delivered exactly once to its own account's webhook", { timeout: 60_000 }, async () => {
    // One account per shard: the events queue carries both shards' events in its batches.
    const a = await createKey("pro", { shard: 0 });
    const b = await createKey("pro", { shard: 1 });
    const ha = await registerWebhook(a, { events: ["*"] });
    const hb = await registerWebhook(b, { events: ["*"] });
    const emitted = await emitEvent(Array.from({ length: 1000 }, (_, i) => ({ accountId: i % 2 ? b.accountId : a.accountId, data: { n: i } })));
    const gotA = await waitForDeliveries(ha.inbox, 500, 50_000);
    const gotB = await waitForDeliveries(hb.inbox, 500, 50_000);
    await sleep(1000);
    const idsA = emitted.filter((e) => e.accountId === a.accountId).map((e) => e.id).sort();
    const idsB = emitted.filter((e) => e.accountId === b.accountId).map((e) => e.id).sort();
    expect((await receivedAt(ha.inbox)).map((g) => g.webhookId).sort()).toEqual(idsA);
    expect((await receivedAt(hb.inbox)).map((g) => g.webhookId).sort()).toEqual(idsB);
    expect(gotA.every((g) => g.verified) && gotB.every((g) => g.verified)).toBe(true);
  });
});
