import { and, eq, inArray, isNotNull, isNull, lt, lte, or, sql } from "drizzle-orm";
import { getDb } from "../db/client.ts";
import { events, webhookAttempts, webhookDeliveries, webhooks } from "../db/schema/index.ts";
import { checkTargetUrl } from "../platform/safe-url.ts";
import { newId } from "../platform/ids.ts";
import { allowLoopback, disableAfterMs, MAX_QUEUE_DELAY_SECONDS, retrySchedule, timeoutMs } from "./config.ts";
import { decideOutcome, type Outcome } from "./retry-policy.ts";
import { sendAttempt, type SendResult } from "./send-attempt.ts";
import { TEST_EVENT_TYPE, type DeliveryQueueMessage } from "./types.ts";

/** How long an attempt in flight holds its delivery (well over the 15 s timeout plus D1 writes). */
const LEASE_MS = 60_000;
/** A queue message may arrive a little before the delay it was given. */
const EARLY_SLACK_MS = 1_000;

export type Webhook = typeof webhooks.$inferSelect;
export type Delivery = typeof webhookDeliveries.$inferSelect;

export type AttemptReport =
  | { attempted: false; reason: "not_due" | "busy" | "done" | "missing" | "disabled" }
  | { attempted: true; attempt: number; result: SendResult; outcome: Outcome };

/** Secrets a delivery is signed with now: the current one, and the previous one during its grace period. */
export function activeSecrets(hook: Pick<Webhook, "secret" | "previousSecret" | "previousSecretExpiresAt">, now: number): string[] {
  const out = [hook.secret];
  if (hook.previousSecret && (hook.previousSecretExpiresAt ?? 0) > now) out.push(hook.previousSecret);
  return out;
}

/**
 * Makes the next attempt of one delivery if it is due and nobody else holds it, records the
 * attempt, and schedules the following one. Safe against duplicate queue messages (the lease is
 * taken with a conditional UPDATE) and against a crash mid-attempt (the lease expires and the cron
 * re-enqueues the overdue delivery; the receiver deduplicates on `webhook-id`).
 */
export async function attemptDelivery(env: Env, deliveryId: string, now = Date.now()): Promise<AttemptReport> {
  const db = getDb(env.DB);
  const ofDelivery = (col: typeof webhookDeliveries.webhookId | typeof webhookDeliveries.eventId) => db.select({ id: col }).from(webhookDeliveries).where(eq(webhookDeliveries.id, deliveryId));
  // One round trip: take the lease and read what the attempt needs (read even if the lease is not ours; unused then).
  const [claimedRows, hooks, payloads] = await db.batch([
    db
      .update(webhookDeliveries)
      .set({ leaseUntil: now + LEASE_MS })
      .where(
        and(
          eq(webhookDeliveries.id, deliveryId),
          eq(webhookDeliveries.status, "pending"),
          or(isNull(webhookDeliveries.leaseUntil), lt(webhookDeliveries.leaseUntil, now)),
          lte(webhookDeliveries.nextAttemptAt, now + EARLY_SLACK_MS),
        ),
      )
      .returning(),
    db.select().from(webhooks).where(inArray(webhooks.id, ofDelivery(webhookDeliveries.webhookId))),
    db.select({ payload: events.payload }).from(events).where(inArray(events.id, ofDelivery(webhookDeliveries.eventId))),
  ]);
  const claimed = claimedRows[0];
  if (!claimed) return explainUnclaimed(env, deliveryId, now);
  // Same account only (a delivery row is always written with its webhook's account; belt and braces).
  const hook = hooks.find((h) => h.accountId === claimed.accountId);
  const event = payloads[0];
  const isTest = claimed.eventType === TEST_EVENT_TYPE;
  if (!hook || !event) {
    await finish(env, claimed, { status: "failed", lastError: hook ? "event record missing" : "webhook deleted" }, now);
    return { attempted: false, reason: "missing" };
  }
  if (!hook.enabled && !isTest) {
    await finish(env, claimed, { status: "failed", lastError: `endpoint disabled${hook.disabledReason ? ` (${hook.disabledReason})` : ""}` }, now);
    return { attempted: false, reason: "disabled" };
  }

  const attempt = claimed.attempts + 1;
  // The URL was checked at registration; check again in case the rules (or the dev flag) changed.
  const urlCheck = checkTargetUrl(hook.url, { allowLoopback: allowLoopback(env) });
  const result: SendResult = urlCheck.ok
    ? await sendAttempt({ url: hook.url, secrets: activeSecrets(hook, now), messageId: claimed.eventId, body: event.payload, timeoutMs: timeoutMs(env) })
    : { statusCode: null, durationMs: 0, error: `URL refused: ${urlCheck.reason}`, responseBody: null, retryAfter: null };
  const outcome: Outcome = urlCheck.ok ? decideOutcome(attempt, result, retrySchedule(env), isTest) : { status: "failed", gone: false };

  const doneAt = Date.now();
  const nextAttemptAt = outcome.status === "pending" ? doneAt + outcome.delaySeconds * 1000 : null;
  const queueable = outcome.status === "pending" && outcome.delaySeconds <= MAX_QUEUE_DELAY_SECONDS;
  const writes = [
    db.insert(webhookAttempts).values({
      id: newId("att", doneAt),
      deliveryId: claimed.id,
      accountId: claimed.accountId,
      attempt,
      statusCode: result.statusCode,
      durationMs: result.durationMs,
      error: result.error,
      responseBody: result.responseBody,
      nextAttemptAt,
      createdAt: doneAt,
    }),
    db
      .update(webhookDeliveries)
      .set({ status: outcome.status, attempts: attempt, nextAttemptAt, queuedAt: queueable ? doneAt : null, leaseUntil: null, lastStatusCode: result.statusCode, lastError: result.error, updatedAt: doneAt })
      .where(eq(webhookDeliveries.id, claimed.id)),
    ...(isTest ? [] : endpointHealthWrites(env, hook, outcome, doneAt)),
  ];
  await db.batch(writes as [(typeof writes)[number], ...(typeof writes)[number][]]);

  if (queueable) {
    try {
      await env.DELIVERY_QUEUE.send({ kind: "delivery", id: claimed.id } satisfies DeliveryQueueMessage, { contentType: "json", delaySeconds: outcome.delaySeconds });
    } catch (err) {
      // Still recorded as due in D1: the cron enqueues it.
      await db.update(webhookDeliveries).set({ queuedAt: null }).where(eq(webhookDeliveries.id, claimed.id));
      console.error(JSON.stringify({ level: "error", msg: "delivery queue send failed; the cron will enqueue", deliveryId: claimed.id, error: String(err) }));
    }
  }
  return { attempted: true, attempt, result, outcome };
}

/** Success ends a failure streak; a failure starts one; 410, or a streak past the limit, disables the endpoint. */
function endpointHealthWrites(env: Env, hook: Webhook, outcome: Outcome, now: number) {
  const db = getDb(env.DB);
  const byId = and(eq(webhooks.id, hook.id), eq(webhooks.accountId, hook.accountId));
  if (outcome.status === "succeeded") {
    return hook.failingSince === null ? [] : [db.update(webhooks).set({ failingSince: null }).where(byId)];
  }
  if (outcome.status === "failed" && outcome.gone) {
    return [db.update(webhooks).set({ enabled: false, disabledReason: "gone", updatedAt: now }).where(byId)];
  }
  return [
    db.update(webhooks).set({ failingSince: sql`coalesce(${webhooks.failingSince}, ${now})` }).where(byId),
    db
      .update(webhooks)
      .set({ enabled: false, disabledReason: "failing", updatedAt: now })
      .where(and(byId, eq(webhooks.enabled, true), isNotNull(webhooks.failingSince), lte(webhooks.failingSince, now - disableAfterMs(env)))),
  ];
}

async function finish(env: Env, d: Delivery, fields: { status: "failed"; lastError: string }, now: number): Promise<void> {
  await getDb(env.DB)
    .update(webhookDeliveries)
    .set({ ...fields, nextAttemptAt: null, queuedAt: null, leaseUntil: null, updatedAt: now })
    .where(eq(webhookDeliveries.id, d.id));
}

/** Why a delivery could not be claimed; a message that came early is put back for the remaining time. */
async function explainUnclaimed(env: Env, deliveryId: string, now: number): Promise<AttemptReport> {
  const d = await getDb(env.DB).select().from(webhookDeliveries).where(eq(webhookDeliveries.id, deliveryId)).get();
  if (!d) return { attempted: false, reason: "missing" };
  if (d.status !== "pending") return { attempted: false, reason: "done" };
  if (d.leaseUntil !== null && d.leaseUntil >= now) return { attempted: false, reason: "busy" };
  const waitSeconds = Math.ceil(((d.nextAttemptAt ?? now) - now) / 1000);
  if (waitSeconds <= MAX_QUEUE_DELAY_SECONDS) {
    await env.DELIVERY_QUEUE.send({ kind: "delivery", id: d.id } satisfies DeliveryQueueMessage, { contentType: "json", delaySeconds: Math.max(1, waitSeconds) });
  }
  return { attempted: false, reason: "not_due" };
}
