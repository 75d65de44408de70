import { and, asc, count, desc, eq, inArray, lt, sql } from "drizzle-orm";
import { events, webhookAttempts, webhookDeliveries, webhooks } from "../../db/schema/index.ts";
import { allowLoopback, MAX_WEBHOOKS_PER_ACCOUNT, secretGraceMs } from "../config.ts";
import { insertDeliveries } from "../attempt-writes.ts";
import { attemptDelivery } from "../delivery.ts";
import { eventOfFoldedId, foldedOf, foldedRow } from "../folded.ts";
import { newWebhookSecret } from "../signing.ts";
import { resetThrottle } from "../throttle.ts";
import { TEST_EVENT_TYPE, type DeliveryQueueMessage, type EventPayload } from "../types.ts";
import { errors } from "../../platform/errors.ts";
import { newId } from "../../platform/ids.ts";
import { checkTargetUrl } from "../../platform/safe-url.ts";
import type { CreateWebhookInput, DeliveryView, UpdateWebhookInput, WebhookView } from "./schemas.ts";
import { toDeliveryView, toWebhookView } from "./mapper.ts";
import { itemsPerStatement } from "../../platform/d1.ts";
import { decodeCursor, IdCursor, toPage, type Page } from "../../platform/pagination.ts";
import { accountShard, type Shard } from "../../platform/shards.ts";

type WebhookRow = typeof webhooks.$inferSelect;
type DeliveryRow = typeof webhookDeliveries.$inferSelect;
type AttemptRow = typeof webhookAttempts.$inferSelect;
const ATTEMPT_IDS_PER_STATEMENT = itemsPerStatement(1, 1);

/** The URL rules of docs/contracts.md §4 / src/platform/safe-url.ts, as a 400 naming the field. */
function assertTargetUrl(env: Env, url: string): void {
  const check = checkTargetUrl(url, { allowLoopback: allowLoopback(env) });
  if (!check.ok) throw errors.invalidRequest(`The webhook URL ${check.reason}.`, [{ path: "url", message: `URL ${check.reason}` }]);
}

/** `["*"]` if any filter is `*`; otherwise the distinct types. */
function normalizeEvents(list: string[]): string[] {
  return list.includes("*") ? ["*"] : [...new Set(list)];
}

async function findWebhook(env: Env, accountId: string, id: string): Promise<WebhookRow> {
  const row = await (await accountShard(env, accountId)).db.select().from(webhooks).where(and(eq(webhooks.accountId, accountId), eq(webhooks.id, id))).get();
  if (!row) throw errors.notFound("webhook");
  return row;
}

export async function createWebhook(env: Env, accountId: string, input: CreateWebhookInput): Promise<WebhookView & { secret: string }> {
  assertTargetUrl(env, input.url);
  const { db } = await accountShard(env, accountId);
  const existing = await db.select({ n: count() }).from(webhooks).where(eq(webhooks.accountId, accountId)).get();
  if ((existing?.n ?? 0) >= MAX_WEBHOOKS_PER_ACCOUNT) {
    throw errors.conflict("webhook_limit_reached", `An account can have at most ${MAX_WEBHOOKS_PER_ACCOUNT} webhooks. Delete one first.`, { limit: MAX_WEBHOOKS_PER_ACCOUNT });
  }
  const now = Date.now();
  const row: WebhookRow = {
    id: newId("wh", now),
    accountId,
    url: input.url,
    description: input.description ?? null,
    events: normalizeEvents(input.events),
    sessionId: input.sessionId ?? null,
    enabled: input.enabled,
    disabledReason: null,
    secret: newWebhookSecret(),
    previousSecret: null,
    previousSecretExpiresAt: null,
    failingSince: null,
    maxPerSecond: input.maxPerSecond ?? null,
    createdAt: now,
    updatedAt: now,
  };
  await db.insert(webhooks).values(row);
  return { ...toWebhookView(row, now), secret: row.secret };
}

export async function listWebhooks(env: Env, accountId: string, q: { limit: number; cursor?: string }): Promise<Page<WebhookView>> {
  const before = decodeCursor(q.cursor, IdCursor)?.id;
  const where = before ? and(eq(webhooks.accountId, accountId), lt(webhooks.id, before)) : eq(webhooks.accountId, accountId);
  const rows = await (await accountShard(env, accountId)).db.select().from(webhooks).where(where).orderBy(desc(webhooks.id)).limit(q.limit + 1).all();
  const page = toPage(rows, q.limit, (r) => ({ id: r.id }));
  return { data: page.data.map((r) => toWebhookView(r)), nextCursor: page.nextCursor };
}

export async function getWebhook(env: Env, accountId: string, id: string): Promise<WebhookView> {
  return toWebhookView(await findWebhook(env, accountId, id));
}

/** Partial update; `rotateSecret` returns the new secret, the old one signs too until the grace period ends. */
export async function updateWebhook(env: Env, accountId: string, id: string, input: UpdateWebhookInput): Promise<WebhookView & { secret?: string }> {
  const row = await findWebhook(env, accountId, id);
  if (input.url !== undefined) assertTargetUrl(env, input.url);
  const now = Date.now();
  const next: WebhookRow = { ...row, updatedAt: now };
  if (input.url !== undefined) next.url = input.url;
  if (input.events !== undefined) next.events = normalizeEvents(input.events);
  if (input.description !== undefined) next.description = input.description;
  if (input.sessionId !== undefined) next.sessionId = input.sessionId;
  if (input.enabled !== undefined) {
    next.enabled = input.enabled;
    if (input.enabled) {
      next.disabledReason = null;
      next.failingSince = null;
    }
  }
  if (input.maxPerSecond !== undefined) next.maxPerSecond = input.maxPerSecond;
  if (input.rotateSecret) {
    next.previousSecret = row.secret;
    next.previousSecretExpiresAt = now + secretGraceMs(env);
    next.secret = newWebhookSecret();
  }
  const { id: _id, accountId: _acc, createdAt: _c, ...changes } = next;
  await (await accountShard(env, accountId)).db.update(webhooks).set(changes).where(and(eq(webhooks.accountId, accountId), eq(webhooks.id, id)));
  // Slots reserved at the old rate are forgotten; waiting deliveries ask again at the new one.
  if (next.maxPerSecond !== row.maxPerSecond && row.maxPerSecond !== null) await resetThrottle(env, accountId, id, now);
  const view = toWebhookView(next, now);
  return input.rotateSecret ? { ...view, secret: next.secret } : view;
}

/** Deletes the webhook and its delivery log; pending deliveries stop (their next attempt finds nothing). */
export async function deleteWebhook(env: Env, accountId: string, id: string): Promise<null> {
  await findWebhook(env, accountId, id);
  const { db } = await accountShard(env, accountId);
  const ofHook = db.select({ id: webhookDeliveries.id }).from(webhookDeliveries).where(and(eq(webhookDeliveries.accountId, accountId), eq(webhookDeliveries.webhookId, id)));
  await db.batch([
    db.delete(webhookAttempts).where(inArray(webhookAttempts.deliveryId, ofHook)),
    db.delete(webhookDeliveries).where(and(eq(webhookDeliveries.accountId, accountId), eq(webhookDeliveries.webhookId, id))),
    db.delete(webhooks).where(and(eq(webhooks.accountId, accountId), eq(webhooks.id, id))),
  ]);
  return null;
}

/** Newest first, each with its attempts. */
export async function listDeliveries(env: Env, accountId: string, webhookId: string, q: { limit: number; cursor?: string; status?: DeliveryRow["status"] }): Promise<Page<DeliveryView>> {
  await findWebhook(env, accountId, webhookId);
  const opts = { ...q, before: decodeCursor(q.cursor, IdCursor)?.id };
  const { db } = await accountShard(env, accountId);
  const conditions = [eq(webhookDeliveries.accountId, accountId), eq(webhookDeliveries.webhookId, webhookId)];
  if (opts.before) conditions.push(lt(webhookDeliveries.id, opts.before));
  if (opts.status) conditions.push(eq(webhookDeliveries.status, opts.status));
  let rows = await db.select().from(webhookDeliveries).where(and(...conditions)).orderBy(desc(webhookDeliveries.id)).limit(opts.limit + 1).all();
  if (opts.status === undefined || opts.status === "succeeded") {
    // Successes folded on their event rows (events/folded.ts), merged in by id.
    const folded = await foldedPage(env, accountId, webhookId, opts.before, opts.limit + 1);
    rows = [...rows, ...folded].sort((a, b) => (a.id < b.id ? 1 : -1)).slice(0, opts.limit + 1);
  }
  const attempts = await attemptsOf(env, accountId, rows.slice(0, opts.limit).map((r) => r.id));
  const page = toPage(rows, opts.limit, (r) => ({ id: r.id }));
  return { data: page.data.map((r) => toDeliveryView(r, attempts.get(r.id) ?? [])), nextCursor: page.nextCursor };
}

/**
 * The newest `take` folded successes of one webhook below the delivery id `before`: their ids sort
 * as their events do, so the events are read newest first through the partial index of those with
 * folded successes, from the event the bound names.
 */
async function foldedPage(env: Env, accountId: string, webhookId: string, before: string | undefined, take: number): Promise<DeliveryRow[]> {
  const { d1 } = await accountShard(env, accountId);
  const bound = before === undefined ? null : `evt_${before.slice(4, 25)}`;
  const res = await d1
    .prepare(
      `SELECT id, account_id AS accountId, type, delivered FROM events INDEXED BY events_account_delivered_idx WHERE account_id = ?1 AND delivered IS NOT NULL${bound === null ? "" : " AND id <= ?4"} AND EXISTS (SELECT 1 FROM json_each(delivered) j WHERE json_extract(j.value, '$.w') = ?2) ORDER BY id DESC LIMIT ?3`,
    )
    .bind(accountId, webhookId, take + 1, ...(bound === null ? [] : [bound]))
    .all<{ id: string; accountId: string; type: string; delivered: string }>();
  return res.results
    .flatMap((e) => foldedOf(e.delivered).filter((f) => f.w === webhookId).map((f) => foldedRow(e, f)))
    .filter((r) => before === undefined || r.id < before)
    .slice(0, take);
}

/** A folded success of this webhook by its id (events/folded.ts), as the row it would have been. */
async function findFolded(env: Env, accountId: string, webhookId: string, deliveryId: string): Promise<DeliveryRow | null> {
  const eventId = eventOfFoldedId(deliveryId);
  if (eventId === null) return null;
  const row = await (await accountShard(env, accountId)).db.select({ id: events.id, accountId: events.accountId, type: events.type, delivered: events.delivered }).from(events).where(and(eq(events.accountId, accountId), eq(events.id, eventId))).get();
  const f = row ? foldedOf(row.delivered).find((x) => x.id === deliveryId && x.w === webhookId) : undefined;
  return row && f ? foldedRow(row, f) : null;
}

async function attemptsOf(env: Env, accountId: string, deliveryIds: string[]): Promise<Map<string, AttemptRow[]>> {
  const out = new Map<string, AttemptRow[]>();
  if (deliveryIds.length === 0) return out;
  // A page of 100 deliveries is more ids than one statement may bind (D1: 100 parameters).
  const rows: AttemptRow[] = [];
  const { db } = await accountShard(env, accountId);
  for (let i = 0; i < deliveryIds.length; i += ATTEMPT_IDS_PER_STATEMENT) {
    rows.push(
      ...(await db
        .select()
        .from(webhookAttempts)
        .where(and(eq(webhookAttempts.accountId, accountId), inArray(webhookAttempts.deliveryId, deliveryIds.slice(i, i + ATTEMPT_IDS_PER_STATEMENT))))
        .orderBy(asc(webhookAttempts.deliveryId), asc(webhookAttempts.attempt))
        .all()),
    );
  }
  for (const a of rows) out.set(a.deliveryId, [...(out.get(a.deliveryId) ?? []), a]);
  return out;
}

export async function getDelivery(env: Env, accountId: string, webhookId: string, deliveryId: string): Promise<DeliveryView> {
  const row = await findDelivery(env, accountId, webhookId, deliveryId);
  return toDeliveryView(row, (await attemptsOf(env, accountId, [row.id])).get(row.id) ?? []);
}

async function findDelivery(env: Env, accountId: string, webhookId: string, deliveryId: string): Promise<DeliveryRow> {
  const row = await (await accountShard(env, accountId)).db
    .select()
    .from(webhookDeliveries)
    .where(and(eq(webhookDeliveries.accountId, accountId), eq(webhookDeliveries.webhookId, webhookId), eq(webhookDeliveries.id, deliveryId)))
    .get();
  const found = row ?? (await findFolded(env, accountId, webhookId, deliveryId));
  if (!found) throw errors.notFound("delivery");
  return found;
}

/**
 * Queues one more attempt of a delivery now (same `webhook-id`, so receivers still deduplicate).
 * After the retry schedule is used up, a manual retry is a single attempt.
 */
export async function retryDelivery(env: Env, accountId: string, webhookId: string, deliveryId: string): Promise<DeliveryView> {
  const hook = await findWebhook(env, accountId, webhookId);
  const row = await findDelivery(env, accountId, webhookId, deliveryId);
  if (!hook.enabled) throw errors.conflict("webhook_disabled", "The webhook is disabled: enable it (PUT with `enabled: true`) before retrying its deliveries.");
  const now = Date.now();
  if (row.status === "pending" && row.leaseUntil !== null && row.leaseUntil >= now) {
    throw errors.conflict("delivery_in_progress", "An attempt of this delivery is in progress. Retry when it has finished.");
  }
  const shard = await accountShard(env, accountId);
  const pending = shard.db
    .update(webhookDeliveries)
    .set({ status: "pending", nextAttemptAt: now, queuedAt: now, updatedAt: now })
    .where(and(eq(webhookDeliveries.accountId, accountId), eq(webhookDeliveries.id, row.id)));
  if (eventOfFoldedId(row.id) !== null && !(await shard.db.select({ id: webhookDeliveries.id }).from(webhookDeliveries).where(and(eq(webhookDeliveries.accountId, accountId), eq(webhookDeliveries.id, row.id))).get())) {
    // A folded success becomes a row (the same id), and leaves its event row, in one batch.
    await shard.db.batch([unfold(shard, accountId, row.eventId, row.id), ...insertDeliveries(shard, [row]), pending]);
  } else {
    await pending;
  }
  await env.DELIVERY_QUEUE.send({ kind: "delivery", id: row.id, shard: shard.index } satisfies DeliveryQueueMessage, { contentType: "json" });
  return getDelivery(env, accountId, webhookId, deliveryId);
}

/** Removes one folded success from its event row (`delivered` becomes null once empty). */
function unfold(shard: Shard, accountId: string, eventId: string, deliveryId: string) {
  const rest = sql`(SELECT json_group_array(json(j.value)) FROM json_each(${events.delivered}) AS j WHERE json_extract(j.value, '$.id') <> ${deliveryId})`;
  return shard.db
    .update(events)
    .set({ delivered: sql`CASE WHEN ${rest} = '[]' THEN NULL ELSE ${rest} END` })
    .where(and(eq(events.accountId, accountId), eq(events.id, eventId)));
}

/** Sends a signed `webhook.test` now (even to a disabled webhook) and answers what the receiver said. Never retried. */
export async function testWebhook(env: Env, accountId: string, webhookId: string) {
  const hook = await findWebhook(env, accountId, webhookId);
  const shard = await accountShard(env, accountId);
  const { db } = shard;
  const now = Date.now();
  const eventId = newId("evt", now);
  const payload: EventPayload = {
    type: TEST_EVENT_TYPE,
    timestamp: new Date(now).toISOString(),
    data: { webhookId: hook.id, message: "This is a test delivery. Verify its signature with your webhook secret." },
  };
  const deliveryId = newId("dlv", now);
  await db.batch([
    db.insert(events).values({ id: eventId, accountId, type: TEST_EVENT_TYPE, sessionId: null, payload: JSON.stringify(payload), createdAt: now, fannedOutAt: now, requeues: 0 }),
    db.insert(webhookDeliveries).values({ id: deliveryId, accountId, webhookId: hook.id, eventId, eventType: TEST_EVENT_TYPE, status: "pending", attempts: 0, nextAttemptAt: now, queuedAt: now, createdAt: now, updatedAt: now }),
  ]);
  const report = await attemptDelivery(env, shard, deliveryId, now);
  if (!report.attempted) throw new Error(`test delivery not attempted: ${report.reason}`);
  const r = report.result;
  return { success: report.outcome.status === "succeeded", statusCode: r.statusCode, durationMs: r.durationMs, error: r.error, deliveryId, eventId };
}
