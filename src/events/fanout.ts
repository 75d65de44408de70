import { and, eq, inArray, isNull, or, lt } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import { getDb } from "../db/client.ts";
import { events, webhookDeliveries, webhooks } from "../db/schema/index.ts";
import { newId } from "../platform/ids.ts";
import { webhookMatches } from "./matching.ts";

/** Rows per INSERT: D1 binds at most 100 parameters per statement (14 columns here). */
const ROWS_PER_INSERT = 7;

/**
 * Creates one delivery per (event, matching enabled webhook of the event's account), idempotently
 * (unique on event and webhook), marks the events fanned out, and returns every delivery of these
 * events still waiting for its first attempt: on a re-delivered batch that includes the ones an
 * earlier, crashed run created but never attempted.
 */
export async function fanOut(env: Env, eventIds: string[], now = Date.now()): Promise<string[]> {
  if (eventIds.length === 0) return [];
  const db = getDb(env.DB);
  // One round trip for the events and the enabled webhooks of their accounts.
  const ofEvents = inArray(events.id, eventIds);
  const [rows, hooks] = await db.batch([
    db.select({ id: events.id, accountId: events.accountId, type: events.type, sessionId: events.sessionId, createdAt: events.createdAt }).from(events).where(ofEvents),
    db
      .select({ id: webhooks.id, accountId: webhooks.accountId, enabled: webhooks.enabled, events: webhooks.events, sessionId: webhooks.sessionId, createdAt: webhooks.createdAt })
      .from(webhooks)
      .where(and(eq(webhooks.enabled, true), inArray(webhooks.accountId, db.select({ accountId: events.accountId }).from(events).where(ofEvents)))),
  ]);
  if (rows.length === 0) return [];

  const deliveries: (typeof webhookDeliveries.$inferInsert)[] = [];
  for (const ev of rows) {
    for (const hook of hooks) {
      // A webhook registered after the event happened does not get it, however late the fan-out runs.
      if (hook.accountId !== ev.accountId || hook.createdAt > ev.createdAt || !webhookMatches(hook, ev)) continue;
      deliveries.push({ id: newId("dlv", now), accountId: ev.accountId, webhookId: hook.id, eventId: ev.id, eventType: ev.type, status: "pending", attempts: 0, nextAttemptAt: now, queuedAt: now, leaseUntil: null, lastStatusCode: null, lastError: null, createdAt: now, updatedAt: now });
    }
  }
  const rowIds = rows.map((r) => r.id);
  const writes: BatchItem<"sqlite">[] = [];
  for (let i = 0; i < deliveries.length; i += ROWS_PER_INSERT) writes.push(db.insert(webhookDeliveries).values(deliveries.slice(i, i + ROWS_PER_INSERT)).onConflictDoNothing());
  writes.push(db.update(events).set({ fannedOutAt: now }).where(and(inArray(events.id, rowIds), isNull(events.fannedOutAt))));
  // In the same batch (one transaction, in order): every delivery of these events still waiting
  // for its first attempt, including those an earlier, crashed run created.
  const waitingQuery = db
    .select({ id: webhookDeliveries.id })
    .from(webhookDeliveries)
    .where(and(inArray(webhookDeliveries.eventId, rowIds), eq(webhookDeliveries.status, "pending"), eq(webhookDeliveries.attempts, 0), or(isNull(webhookDeliveries.leaseUntil), lt(webhookDeliveries.leaseUntil, now))));
  writes.push(waitingQuery);
  const results = await db.batch(writes as [BatchItem<"sqlite">, ...BatchItem<"sqlite">[]]);
  const waiting = results[results.length - 1] as { id: string }[];
  return waiting.map((w) => w.id);
}
