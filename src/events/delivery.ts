import { and, eq, inArray, isNotNull, isNull, lt, lte, or, sql } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import { events, webhookAttempts, webhookDeliveries, webhooks } from "../db/schema/index.ts";
import { checkTargetUrl } from "../platform/safe-url.ts";
import { newId } from "../platform/ids.ts";
import { insertDeliveries, streakEnds, successWrites, type Success } from "./attempt-writes.ts";
import { allowLoopback, disableAfterMs, leaseMs, MAX_QUEUE_DELAY_SECONDS, retrySchedule, timeoutMs } from "./config.ts";
import { decideOutcome, type DeliveryOutcome } from "./retry-policy.ts";
import { sendAttempt, type SignedPostResult } from "./send-attempt.ts";
import { signedHeaders } from "./signing.ts";
import { isThrottled, throttle } from "./throttle.ts";
import type { Gate } from "./send-gate.ts";
import { waitForTurn, type Landed } from "./send-turn.ts";
import { TEST_EVENT_TYPE, type DeliveryQueueMessage } from "./types.ts";
import { enqueueEvents, prepareEventAfterChange, prepareEvents } from "./emit.ts";
import { deliveryExhaustedEvent, isOperational, webhookDisabledEvent } from "./operational.ts";
import { chunk } from "../platform/batching.ts";
import { enqueueDeliveries } from "./enqueue-deliveries.ts";
import { giveBack, leaseCovers, queueAgain } from "./lease.ts";
import { itemsPerStatement } from "../platform/d1.ts";
import type { Shard } from "../platform/shards.ts";
import { DEFAULT_WEBHOOK_LEASE_MS } from "../platform/config.ts";

/** How long an attempt in flight holds its delivery by default (well over the 15 s timeout plus D1 writes); WEBHOOK_LEASE_MS sets it. */
export const LEASE_MS = DEFAULT_WEBHOOK_LEASE_MS;
/** A queue message may arrive a little before the delay it was given. */
const EARLY_SLACK_MS = 1_000;

export type WebhookRow = typeof webhooks.$inferSelect;
export type DeliveryRow = typeof webhookDeliveries.$inferSelect;

export type AttemptReport =
  | { attempted: false; reason: "not_due" | "busy" | "done" | "missing" | "disabled" | "late" }
  | { attempted: true; attempt: number; result: SignedPostResult; outcome: DeliveryOutcome };

/** Secrets a delivery is signed with now: the current one, and the previous one during its grace period. */
export function activeSecrets(hook: Pick<WebhookRow, "secret" | "previousSecret" | "previousSecretExpiresAt">, now: number): string[] {
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
export async function attemptDelivery(env: Env, shard: Shard, deliveryId: string, now = Date.now()): Promise<AttemptReport> {
  return (await attemptDeliveries(env, shard, [deliveryId], now))[0]!;
}

/**
 * `attemptClaimed` of deliveries that have no row yet (the events consumer's first attempts): the
 * rows of those that do not succeed are inserted with the outcomes, and `finish` adds the caller's
 * statements (the events' fan-out marks and folded successes) to the same batch.
 */
export interface Unwritten {
  finish(successes: Success[]): BatchItem<"sqlite">[];
}

/** Deliveries per D1 statement: each id is one bound parameter, with room for the statement's own. */
const IDS_PER_STATEMENT = itemsPerStatement(1, 20);
/**
 * Receivers called at once per invocation. Deployed, a Worker keeps at most 6 connections open and
 * queues the others inside the runtime (no error), so more only helps where that limit is absent.
 */
const SEND_CONCURRENCY = 50;
/** A signature made before a throttled attempt's turn is made again if the turn came later than this. */
const RESIGN_AFTER_MS = 30_000;

/**
 * `attemptDelivery` for many deliveries at once, in two D1 round trips per up to 80 of them (take
 * the leases and read what the attempts need; record every outcome), the receivers called
 * concurrently in between. Answers one report per id, in order. Times (leases, when an attempt is due,
 * when the next one is) run from `now`, not the machine's clock, so a test can drive them. `gate`: the throttle object's own
 * (its alarm makes these attempts); elsewhere a throttled attempt asks its endpoint's object for its turn.
 */
export async function attemptDeliveries(env: Env, shard: Shard, deliveryIds: string[], now = Date.now(), waitForSlots = false, gate?: Gate): Promise<AttemptReport[]> {
  const reports = new Map<string, AttemptReport>();
  const skew = now - Date.now();
  for (let i = 0; i < deliveryIds.length; i += IDS_PER_STATEMENT) {
    // Each chunk at its own time (a chunk waits for the one before it), on the caller's clock.
    for (const [id, report] of await attemptChunk(env, shard, [...new Set(deliveryIds.slice(i, i + IDS_PER_STATEMENT))], Date.now() + skew, waitForSlots, gate)) reports.set(id, report);
  }
  return deliveryIds.map((id) => reports.get(id) ?? { attempted: false, reason: "missing" });
}

async function attemptChunk(env: Env, shard: Shard, ids: string[], now: number, waitForSlots: boolean, gate?: Gate): Promise<Map<string, AttemptReport>> {
  const db = shard.db;
  const reports = new Map<string, AttemptReport>();
  const ofDeliveries = (col: typeof webhookDeliveries.webhookId | typeof webhookDeliveries.eventId) => db.select({ id: col }).from(webhookDeliveries).where(inArray(webhookDeliveries.id, ids));
  // One round trip: take the leases and read what the attempts need (read even where the lease is not ours; unused then).
  const [claimed, hooks, payloads] = await db.batch([
    db
      .update(webhookDeliveries)
      .set({ leaseUntil: now + leaseMs(env) })
      .where(
        and(
          inArray(webhookDeliveries.id, ids),
          // `+`: by id, never the scan of every due delivery (a backlog's) per batch.
          eq(sql`+${webhookDeliveries.status}`, "pending"),
          or(isNull(webhookDeliveries.leaseUntil), lt(webhookDeliveries.leaseUntil, now)),
          lte(webhookDeliveries.nextAttemptAt, now + EARLY_SLACK_MS),
        ),
      )
      .returning(),
    db.select().from(webhooks).where(inArray(webhooks.id, ofDeliveries(webhookDeliveries.webhookId))),
    db.select({ id: events.id, payload: events.payload }).from(events).where(inArray(events.id, ofDeliveries(webhookDeliveries.eventId))),
  ]);
  const claimedIds = new Set(claimed.map((d) => d.id));
  gate?.release(ids.filter((id) => !claimedIds.has(id)));
  // The throttle object looks again at one still busy itself (next alarm); the throttle queue's consumer through that queue.
  for (const id of ids) if (!claimedIds.has(id)) reports.set(id, await explainUnclaimed(env, shard, id, now, waitForSlots && !gate));
  for (const [id, report] of await attemptClaimed(env, shard, claimed, hooks, payloads, now, waitForSlots, undefined, gate)) reports.set(id, report);
  return reports;
}

/**
 * Makes the attempts of deliveries whose leases this invocation holds, given their webhooks and
 * event payloads, and records every outcome in one D1 round trip. Used after `attemptChunk`'s
 * claim, and by the events consumer, which claims first attempts in its fan-out batch.
 */
export async function attemptClaimed(env: Env, shard: Shard, claimed: DeliveryRow[], hooks: WebhookRow[], payloads: { id: string; payload: string }[], now: number, waitForSlots = false, unwritten?: Unwritten, gate?: Gate): Promise<Map<string, AttemptReport>> {
  const db = shard.db;
  // The caller's clock: `now` plus the time this call has taken (the next attempt is timed from the outcome).
  const skew = now - Date.now();
  const reports = new Map<string, AttemptReport>();
  const writes: BatchItem<"sqlite">[] = [];
  const retries: { id: string; delaySeconds: number }[] = [];
  /** Turns that came too late for the lease (lease.ts): not attempted, queued again. */
  const late = new Map<string, boolean>();
  const successes: Success[] = [];
  const failedHooks = new Set<string>();
  /** Operational events written in this batch, enqueued after it commits. */
  const announced: string[] = [];
  const toSend: { d: DeliveryRow; hook: WebhookRow; payload: string; isTest: boolean }[] = [];
  for (const d of claimed) {
    // Same account only (a delivery row is always written with its webhook's account; belt and braces).
    const hook = hooks.find((h) => h.id === d.webhookId && h.accountId === d.accountId);
    const payload = payloads.find((e) => e.id === d.eventId)?.payload;
    const isTest = d.eventType === TEST_EVENT_TYPE;
    if (!hook || payload === undefined) {
      writes.push(finishStatement(shard, d, { status: "failed", lastError: hook ? "event record missing" : "webhook deleted" }, now));
      reports.set(d.id, { attempted: false, reason: "missing" });
    } else if (!hook.enabled && !isTest) {
      writes.push(finishStatement(shard, d, { status: "failed", lastError: `endpoint disabled${hook.disabledReason ? ` (${hook.disabledReason})` : ""}` }, now));
      reports.set(d.id, { attempted: false, reason: "disabled" });
    } else {
      toSend.push({ d, hook, payload, isTest });
    }
  }

  // Endpoints with a rate: attempts wait for their slots, those far ahead are put off (throttle.ts).
  const timed: ((typeof toSend)[number] & { notBefore?: number })[] = toSend.some(isThrottled) ? await throttle(env, shard, toSend, now, waitForSlots) : toSend;
  const gated = new Set(timed.filter(isThrottled).map((t) => t.d.id));
  gate?.release(claimed.filter((d) => !gated.has(d.id)).map((d) => d.id));
  await pool(timed, SEND_CONCURRENCY, async ({ d, hook, payload, isTest, notBefore = 0 }) => {
    // The URL was checked at registration; check again in case the rules (or the dev flag) changed.
    const urlCheck = checkTargetUrl(hook.url, { allowLoopback: allowLoopback(env) });
    const secrets = activeSecrets(hook, now);
    let signed: Record<string, string> | undefined;
    let landed: Landed | undefined;
    if (gated.has(d.id)) {
      // Signed before the turn: after it only the fetch runs, so the start the gate timed is when the request leaves.
      const signedAt = Date.now();
      signed = urlCheck.ok ? await signedHeaders(secrets, d.eventId, payload, signedAt) : undefined;
      landed = await waitForTurn(env, gate, d.id, hook.id, hook.maxPerSecond!, notBefore);
      // A long wait would leave the timestamp stale for a receiver's tolerance: signed again then.
      if (Date.now() - signedAt > RESIGN_AFTER_MS) signed = undefined;
    } else if (notBefore > Date.now()) await new Promise((r) => setTimeout(r, notBefore - Date.now()));
    if (!leaseCovers(d.leaseUntil, Date.now() + skew, timeoutMs(env))) {
      // No request went out: the gate's window does not wait on it.
      await landed?.();
      late.set(d.id, isThrottled({ d, hook, isTest }));
      reports.set(d.id, { attempted: false, reason: "late" });
      return;
    }
    const attempt = d.attempts + 1;
    const result: SignedPostResult = urlCheck.ok
      ? await sendAttempt({ url: hook.url, secrets, messageId: d.eventId, body: payload, timeoutMs: timeoutMs(env), signed })
      : { statusCode: null, durationMs: 0, error: `URL refused: ${urlCheck.reason}`, responseBody: null, retryAfter: null };
    // The gate times the endpoint's next starts from when this request had surely arrived.
    await landed?.();
    const outcome: DeliveryOutcome = urlCheck.ok ? decideOutcome(attempt, result, retrySchedule(env), isTest) : { status: "failed", gone: false };
    const doneAt = Date.now() + skew;
    const nextAttemptAt = outcome.status === "pending" ? doneAt + outcome.delaySeconds * 1000 : null;
    // A queue's delay runs on the machine's clock: a next attempt further off than its longest delay is kept in D1 for the cron.
    const queueDelay = nextAttemptAt === null ? null : Math.max(0, Math.ceil((nextAttemptAt - Date.now()) / 1000));
    const queueable = queueDelay !== null && queueDelay <= MAX_QUEUE_DELAY_SECONDS;
    reports.set(d.id, { attempted: true, attempt, result, outcome });
    if (outcome.status === "succeeded" && !isTest) {
      // Recorded together after the pool (attempt-writes.ts): a few statements for all of them.
      successes.push({ deliveryId: d.id, accountId: d.accountId, webhook: hook, attempt, result, doneAt });
      return;
    }
    if (outcome.status !== "succeeded") failedHooks.add(hook.id);
    writes.push(
      db.insert(webhookAttempts).values({
        id: newId("att", doneAt),
        deliveryId: d.id,
        accountId: d.accountId,
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
        .set({ status: outcome.status, attempts: attempt, nextAttemptAt, queuedAt: queueable ? doneAt : null, leaseUntil: null, lastStatusCode: result.statusCode, lastError: result.error, lastDurationMs: result.durationMs, updatedAt: doneAt })
        .where(eq(webhookDeliveries.id, d.id)),
      ...(isTest ? [] : endpointHealthWrites(env, shard, hook, outcome, doneAt, announced)),
    );
    // A delivery that gave up is announced, unless it carried an announcement itself (no loops).
    if (outcome.status === "failed" && !isTest && !isOperational(d.eventType)) {
      const ev = prepareEvents(env, shard, deliveryExhaustedEvent(d.accountId, { webhookId: hook.id, deliveryId: d.id, eventId: d.eventId, eventType: d.eventType, attempts: attempt, lastStatusCode: result.statusCode, lastError: result.error }));
      writes.push(...ev.statements);
      announced.push(...ev.events.map((e) => e.id));
    }
    if (queueable) retries.push({ id: d.id, delaySeconds: queueDelay });
  });

  // One round trip records every outcome.
  if (unwritten) {
    // Rows not in D1 yet: a success stays without one (its outcome goes on its event row), every
    // other delivery's row is inserted first so the writes above find it.
    const succeeded = new Set(successes.map((s) => s.deliveryId));
    writes.unshift(...insertDeliveries(shard, claimed.filter((d) => !succeeded.has(d.id)).map((d) => (late.has(d.id) ? { ...d, leaseUntil: null } : d))));
    writes.push(...streakEnds(shard, successes, failedHooks), ...unwritten.finish(successes));
  } else {
    writes.push(...successWrites(shard, successes, failedHooks), ...claimed.filter((d) => late.has(d.id)).map((d) => giveBack(shard, d, Date.now() + skew)));
  }
  if (writes.length > 0) await db.batch(writes as [BatchItem<"sqlite">, ...BatchItem<"sqlite">[]]);
  await enqueueWritten(env, shard, announced);

  await enqueueDeliveries(env.DELIVERY_QUEUE, shard, retries, "retry");
  await queueAgain(env, shard, late);
  return reports;
}

/**
 * Enqueues the announcements the batch really wrote (a `webhook.disabled` is written only if its
 * endpoint was still enabled), so a failing attempt costs no queue message for nothing.
 */
async function enqueueWritten(env: Env, shard: Shard, ids: string[]): Promise<void> {
  if (ids.length === 0) return;
  const written: string[] = [];
  for (const part of chunk(ids, IDS_PER_STATEMENT)) {
    written.push(...(await shard.db.select({ id: events.id }).from(events).where(inArray(events.id, part))).map((r) => r.id));
  }
  if (written.length > 0) await enqueueEvents(env, shard, written);
}

/** Gives up this invocation's leases on deliveries still pending, so another attempt may start at once. */
export async function releaseLeases(shard: Shard, deliveryIds: string[]): Promise<void> {
  const db = shard.db;
  for (const part of chunk(deliveryIds, IDS_PER_STATEMENT)) {
    await db.update(webhookDeliveries).set({ leaseUntil: null }).where(and(inArray(webhookDeliveries.id, part), eq(webhookDeliveries.status, "pending")));
  }
}

async function pool<T>(items: T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) await fn(items[next++]!);
  }));
}

/**
 * Success ends a failure streak; a failure starts one; 410, or a streak past the limit, disables the
 * endpoint, and the disabling is announced by a `webhook.disabled` event written only if that UPDATE
 * changed the row (so once, however many attempts fail together). Its id goes into `announced`.
 */
function endpointHealthWrites(env: Env, shard: Shard, hook: WebhookRow, outcome: DeliveryOutcome, now: number, announced: string[]) {
  const db = shard.db;
  const byId = and(eq(webhooks.id, hook.id), eq(webhooks.accountId, hook.accountId));
  if (outcome.status === "succeeded") {
    return hook.failingSince === null ? [] : [db.update(webhooks).set({ failingSince: null }).where(byId)];
  }
  const disable = (reason: "gone" | "failing") => {
    const ev = prepareEventAfterChange(shard, webhookDisabledEvent(hook.accountId, { webhookId: hook.id, url: hook.url, reason, disabledAt: new Date(now).toISOString() }));
    announced.push(ev.event.id);
    return ev.statement;
  };
  if (outcome.status === "failed" && outcome.gone) {
    return [db.update(webhooks).set({ enabled: false, disabledReason: "gone", updatedAt: now }).where(and(byId, eq(webhooks.enabled, true))), disable("gone")];
  }
  return [
    db.update(webhooks).set({ failingSince: sql`coalesce(${webhooks.failingSince}, ${now})` }).where(byId),
    db
      .update(webhooks)
      .set({ enabled: false, disabledReason: "failing", updatedAt: now })
      .where(and(byId, eq(webhooks.enabled, true), isNotNull(webhooks.failingSince), lte(webhooks.failingSince, now - disableAfterMs(env)))),
    disable("failing"),
  ];
}

function finishStatement(shard: Shard, d: DeliveryRow, fields: { status: "failed"; lastError: string }, now: number) {
  return shard.db
    .update(webhookDeliveries)
    .set({ ...fields, nextAttemptAt: null, queuedAt: null, leaseUntil: null, updatedAt: now })
    .where(eq(webhookDeliveries.id, d.id));
}

/** Why a delivery could not be claimed; a message that came early is put back for the remaining time. */
async function explainUnclaimed(env: Env, shard: Shard, deliveryId: string, now: number, throttleQueue = false): Promise<AttemptReport> {
  const d = await shard.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.id, deliveryId)).get();
  if (!d) return { attempted: false, reason: "missing" };
  if (d.status !== "pending") return { attempted: false, reason: "done" };
  if (d.leaseUntil !== null && d.leaseUntil >= now) {
    // A throttle object may hand a slot over while the consumer that took it still writes it down: look again.
    if (throttleQueue) await env.THROTTLE_QUEUE.send({ kind: "delivery", id: d.id, shard: shard.index } satisfies DeliveryQueueMessage, { contentType: "json", delaySeconds: 1 });
    return { attempted: false, reason: "busy" };
  }
  // On the machine's clock, like the queue's delay (the same as `now`'s but in a test driving time).
  const waitSeconds = Math.ceil(((d.nextAttemptAt ?? now) - Date.now()) / 1000);
  if (waitSeconds <= MAX_QUEUE_DELAY_SECONDS) {
    await env.DELIVERY_QUEUE.send({ kind: "delivery", id: d.id, shard: shard.index } satisfies DeliveryQueueMessage, { contentType: "json", delaySeconds: Math.max(1, waitSeconds) });
  }
  return { attempted: false, reason: "not_due" };
}
