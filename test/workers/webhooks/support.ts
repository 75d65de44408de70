import { createMessageBatch } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { eq } from "drizzle-orm";
import { expect, inject } from "vitest";
import { events, webhookDeliveries } from "../../../src/db/schema/index.ts";
import { attemptDelivery, type AttemptReport } from "../../../src/events/delivery.ts";
import type { Shard } from "../../../src/platform/shards.ts";
import { emit, type EmitInput } from "../../../src/events/emit.ts";
import type { EventsQueueMessage } from "../../../src/events/types.ts";
import type { Answer, InboxConfig, Received } from "../../support/receiver.ts";
import { newId } from "../../../src/platform/ids.ts";
import { syntheticEventIds } from "../event-tap.ts";
import { api, createKey, errorOf, type TestKey } from "../helpers.ts";

// Provided by test/support/receiver-setup.ts (a vitest globalSetup, in Node).
export const receiverUrl = () => inject("receiverUrl");
export const deadUrl = () => inject("deadUrl");

let inboxCounter = 0;
/** A fresh inbox on the shared receiver, so tests never see each other's deliveries. */
export function newInbox(): { name: string; url: string } {
  const name = `box${Date.now().toString(36)}${(inboxCounter++).toString(36)}${Math.random().toString(36).slice(2, 6)}`;
  return { name, url: `${receiverUrl()}/in/${name}` };
}

export async function configureInbox(name: string, config: InboxConfig): Promise<void> {
  const res = await fetch(`${receiverUrl()}/inbox/${name}`, { method: "PUT", body: JSON.stringify(config) });
  if (!res.ok) throw new Error(`receiver config failed: ${res.status}`);
}

export async function receivedAt(name: string): Promise<Received[]> {
  return (await (await fetch(`${receiverUrl()}/inbox/${name}`)).json()) as Received[];
}

export async function verifyWith(secret: string, body: string, r: Received): Promise<boolean> {
  const res = await fetch(`${receiverUrl()}/verify/x`, {
    method: "POST",
    body: JSON.stringify({ secret, body, headers: { "webhook-id": r.webhookId, "webhook-timestamp": r.timestamp, "webhook-signature": r.signature } }),
  });
  return ((await res.json()) as { ok: boolean }).ok;
}

/** Polls until `check` returns a value (not undefined/false), or fails after `timeoutMs`. */
export async function waitFor<T>(check: () => Promise<T | undefined | false>, timeoutMs = 10_000, what = "condition"): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Waits until the inbox has at least `n` deliveries. */
export function waitForDeliveries(name: string, n: number, timeoutMs = 10_000): Promise<Received[]> {
  return waitFor(async () => {
    const got = await receivedAt(name);
    return got.length >= n ? got : undefined;
  }, timeoutMs, `${n} deliveries at ${name}`);
}

export interface CreatedWebhook {
  id: string;
  url: string;
  secret: string;
  events: string[];
  sessionId: string | null;
  enabled: boolean;
  inbox: string;
}

/** Registers a webhook on a fresh inbox and tells the receiver its secret. */
export async function registerWebhook(
  key: TestKey,
  body: { events?: string[]; sessionId?: string | null; description?: string; enabled?: boolean; maxPerSecond?: number | null } = {},
  inbox: { script?: Answer[]; then?: Answer; retryAfter?: string; hangMs?: number; redirectTo?: string } = {},
): Promise<CreatedWebhook> {
  const box = newInbox();
  const res = await api("/api/webhooks", { method: "POST", key: key.key, json: { url: box.url, events: body.events ?? ["*"], ...body } });
  if (res.status !== 201) throw new Error(`webhook creation failed: ${res.status} ${await res.text()}`);
  const created = (await res.json()) as Omit<CreatedWebhook, "inbox">;
  await configureInbox(box.name, { secrets: [created.secret], ...inbox });
  return { ...created, inbox: box.name };
}

type EventInput = Partial<EmitInput> & { accountId: string };
const withDefaults = (i: EventInput): EmitInput => ({ type: "message.received", sessionId: null, data: { id: `msg_${Math.random().toString(36).slice(2)}`, text: "hi" }, ...i });

/** An event recorded in `shard`'s D1 whose queue message never went out (or was lost): only the test hands it to a consumer. */
export async function recordOnly(shard: Shard, accountId: string, createdAt = Date.now()): Promise<string> {
  const id = newId("evt");
  syntheticEventIds.add(id); // made-up data: not checked against the catalog
  const payload = JSON.stringify({ type: "message.sent", timestamp: new Date(createdAt).toISOString(), data: { id: "msg_lost" } });
  await shard.db.insert(events).values({ id, accountId, type: "message.sent", sessionId: null, payload, createdAt });
  return id;
}

/** An events-queue batch of one message (`m-<eventId>`) naming `eventId` on shard `shard`, as the emitters send it. */
export function eventBatch(eventId: string, shard: number) {
  return createMessageBatch<EventsQueueMessage>("texmsg-events", [{ id: `m-${eventId}`, timestamp: new Date(), attempts: 1, body: { kind: "event", id: eventId, shard } }]);
}

/** Publishes events the way the messaging code does (until its operations produce them). */
export async function emitEvent(input: EventInput | EventInput[]) {
  const events = await emit(env, Array.isArray(input) ? input.map(withDefaults) : withDefaults(input));
  // made up by the test, not by an operation: the catalog check leaves them out
  for (const e of events) syntheticEventIds.add(e.id);
  return events;
}

export interface DeliveryLog {
  id: string;
  eventId: string;
  eventType: string;
  status: string;
  attemptCount: number;
  nextAttemptAt: string | null;
  lastStatusCode: number | null;
  lastError: string | null;
  attempts: { attempt: number; statusCode: number | null; durationMs: number; error: string | null; nextAttemptAt: string | null; createdAt: string }[];
}

export async function deliveriesOf(key: TestKey, webhookId: string, query = ""): Promise<DeliveryLog[]> {
  const res = await api(`/api/webhooks/${webhookId}/deliveries?limit=100${query}`, { key: key.key });
  if (res.status !== 200) throw new Error(`deliveries: ${res.status}`);
  return ((await res.json()) as { data: DeliveryLog[] }).data;
}

/**
 * Virtual time for retries: the test makes each attempt at the `now` it falls due, instead of sleeping
 * through the schedule. The clock starts two days ahead: a retry that far from the machine's clock is
 * past a queue's longest delay, so it is kept in D1 (never on the real queue), and no cron run sees it.
 */
export const virtualNow = () => Date.now() + 2 * 86400_000;

/**
 * Makes every attempt of a delivery, each at the virtual moment it falls due, until it leaves
 * `pending`; before each retry checks it was not due a moment earlier (the consumers' early slack is
 * 1 s). Answers the reports and the virtual times of the attempts.
 */
export async function driveAttempts(shard: Shard, deliveryId: string, start = virtualNow(), max = 10): Promise<{ reports: AttemptReport[]; times: number[] }> {
  const reports: AttemptReport[] = [];
  const times: number[] = [];
  for (let t = start; reports.length < max; ) {
    const report = await attemptDelivery(env, shard, deliveryId, t);
    expect(report.attempted).toBe(true);
    reports.push(report);
    times.push(t);
    const row = (await shard.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.id, deliveryId)).get())!;
    if (row.status !== "pending") break;
    expect(row.queuedAt).toBeNull(); // off the real queue
    expect(await attemptDelivery(env, shard, deliveryId, row.nextAttemptAt! - 1_500)).toMatchObject({ attempted: false, reason: "not_due" });
    t = row.nextAttemptAt!;
  }
  return { reports, times };
}

export { api, createKey, env, errorOf };
