import { and, eq, inArray, isNull, or, lt, sql } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import { events, webhookDeliveries, webhooks } from "../db/schema/index.ts";
import { newId } from "../platform/ids.ts";
import { LEASE_MS, type DeliveryRow, type WebhookRow } from "./delivery.ts";
import { webhookMatches } from "./matching.ts";
import { sourceWebhookOf } from "./operational.ts";
import type { CommittedEvent } from "./stream/publish.ts";
import type { EventRecord } from "./types.ts";
import { insertDeliveries } from "./attempt-writes.ts";
import type { Shard } from "../platform/shards.ts";

/**
 * Creates one delivery per (event, matching enabled webhook of the event's account), idempotently
 * (unique on event and webhook), marks the events fanned out, and returns every delivery of these
 * events still waiting for its first attempt: on a re-delivered batch that includes the ones an
 * earlier, crashed run created but never attempted.
 */
export async function fanOut(shard: Shard, eventIds: string[], now = Date.now()): Promise<string[]> {
  const { claimed, waiting } = await fanOutAndClaim(shard, eventIds, 0, now);
  return [...claimed.map((d) => d.id), ...waiting];
}

export interface FanOutResult {
  /** Deliveries waiting for their first attempt whose lease this call took (at most `claim`). */
  claimed: DeliveryRow[];
  /** The other deliveries waiting for their first attempt (not leased here). */
  waiting: string[];
  /** The events' webhooks and payloads, for attempting the claimed deliveries. */
  hooks: WebhookRow[];
  payloads: { id: string; payload: string }[];
  /** The events themselves, for the live stream. */
  events: CommittedEvent[];
}

/**
 * `fanOut` that also takes the leases of up to `claim` deliveries waiting for their first attempt,
 * in the same batch: the events consumer then attempts them without another D1 round trip.
 */
export async function fanOutAndClaim(shard: Shard, eventIds: string[], claim: number, now = Date.now(), carried: EventRecord[] = []): Promise<FanOutResult> {
  const none: FanOutResult = { claimed: [], waiting: [], hooks: [], payloads: [], events: [] };
  if (eventIds.length === 0) return none;
  const db = shard.db;
  const { rows, hooks } = await eventsAndHooks(shard, eventIds, carried);
  if (rows.length === 0) return none;

  const deliveries = deliveriesOf(rows, hooks, now);
  const rowIds = rows.map((r) => r.id);
  const statements: BatchItem<"sqlite">[] = [];
  // Multi-row INSERTs with the rows as one JSON parameter each (a few statements however many deliveries).
  statements.push(...insertDeliveries(shard, deliveries));
  statements.push(db.update(events).set({ fannedOutAt: now }).where(and(inArray(events.id, rowIds), isNull(sql`+${events.fannedOutAt}`))));
  // In the same batch (one transaction, in order): the deliveries of these events still waiting
  // for their first attempt, including those an earlier, crashed run created; the first `claim`
  // of them leased here, the others listed.
  // `+`: by event id (its unique index), never the scan of every pending delivery.
  const waitingOf = and(inArray(webhookDeliveries.eventId, rowIds), eq(sql`+${webhookDeliveries.status}`, "pending"), eq(webhookDeliveries.attempts, 0), or(isNull(webhookDeliveries.leaseUntil), lt(webhookDeliveries.leaseUntil, now)));
  const claimIndex = statements.length;
  if (claim > 0) {
    statements.push(
      db
        .update(webhookDeliveries)
        .set({ leaseUntil: now + LEASE_MS })
        .where(inArray(webhookDeliveries.id, db.select({ id: webhookDeliveries.id }).from(webhookDeliveries).where(waitingOf).orderBy(webhookDeliveries.id).limit(claim)))
        .returning(),
    );
  }
  statements.push(db.select({ id: webhookDeliveries.id }).from(webhookDeliveries).where(waitingOf));
  const results = await db.batch(statements as [BatchItem<"sqlite">, ...BatchItem<"sqlite">[]]);
  const claimed = claim > 0 ? (results[claimIndex] as DeliveryRow[]) : [];
  const waiting = (results[results.length - 1] as { id: string }[]).map((w) => w.id);
  return { claimed, waiting, hooks, payloads: rows.map((r) => ({ id: r.id, payload: r.payload })), events: rows };
}

/** One delivery (a row as it is first written: pending, due now) per event and matching webhook of its account. */
export function deliveriesOf(rows: (CommittedEvent & { createdAt: number })[], hooks: WebhookRow[], now: number): DeliveryRow[] {
  const deliveries: DeliveryRow[] = [];
  for (const ev of rows) {
    // an event about an endpoint (it was disabled, a delivery to it gave up) is not sent to that endpoint
    const source = sourceWebhookOf(ev);
    for (const hook of hooks) {
      // A webhook registered after the event happened does not get it, however late the fan-out runs.
      if (hook.accountId !== ev.accountId || hook.createdAt > ev.createdAt || hook.id === source || !webhookMatches(hook, ev)) continue;
      deliveries.push({ id: newId("dlv", now), accountId: ev.accountId, webhookId: hook.id, eventId: ev.id, eventType: ev.type, status: "pending", attempts: 0, nextAttemptAt: now, queuedAt: now, leaseUntil: null, slotAt: null, lastStatusCode: null, lastError: null, lastDurationMs: null, createdAt: now, updatedAt: now });
    }
  }
  return deliveries;
}

/**
 * The events and the webhooks of their accounts (disabled ones too: a delivery left by an earlier
 * run is then recorded as failed for the right reason). Events whose queue messages carried their
 * records (`carried`, written to D1 before they were enqueued) are not read back: only the webhooks
 * are; otherwise one round trip reads both.
 */
async function eventsAndHooks(shard: Shard, eventIds: string[], carried: EventRecord[]): Promise<{ rows: (CommittedEvent & { createdAt: number })[]; hooks: WebhookRow[] }> {
  const db = shard.db;
  const byId = new Map(carried.map((e) => [e.id, e]));
  if (eventIds.every((id) => byId.has(id))) {
    const rows = [...new Set(eventIds)].map((id) => byId.get(id)!);
    const accounts = [...new Set(rows.map((r) => r.accountId))];
    const hooks = await db.select().from(webhooks).where(inArray(webhooks.accountId, accounts));
    return { rows, hooks };
  }
  const ofEvents = inArray(events.id, eventIds);
  const [rows, hooks] = await db.batch([
    db.select({ id: events.id, accountId: events.accountId, type: events.type, sessionId: events.sessionId, createdAt: events.createdAt, payload: events.payload }).from(events).where(ofEvents),
    db.select().from(webhooks).where(inArray(webhooks.accountId, db.select({ accountId: events.accountId }).from(events).where(ofEvents))),
  ]);
  return { rows, hooks };
}
