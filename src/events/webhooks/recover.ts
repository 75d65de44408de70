import { and, asc, eq, gte, inArray, ne } from "drizzle-orm";
import { webhookDeliveries, webhooks } from "../../db/schema/index.ts";
import { chunk, inKeyOrder } from "../../platform/batching.ts";
import { itemsPerStatement } from "../../platform/d1.ts";
import { errors } from "../../platform/errors.ts";
import { log } from "../../platform/log.ts";
import { daysAgo, idAt, retention } from "../../platform/retention.ts";
import { accountShard, type Shard } from "../../platform/shards.ts";
import { TEST_EVENT_TYPE } from "../types.ts";
import type { RecoverInput, RecoverResult } from "./schemas.ts";
import { enqueueDeliveries } from "../enqueue-deliveries.ts";

/** How far back `since` may reach when delivery retention is off (rows kept forever). */
export const RECOVER_MAX_DAYS = 30;
/** Ids per UPDATE, with room for the statement's own parameters. */
const IDS_PER_STATEMENT = itemsPerStatement(1, 10);


/** The oldest `since` a recover accepts: the delivery log's retention (older rows may already be gone). */
export function recoverWindowStart(env: Env, now: number): number {
  return daysAgo(now, retention(env).RETENTION_WEBHOOK_DELIVERIES_DAYS ?? RECOVER_MAX_DAYS);
}

/**
 * Queues again every failed delivery (retries used up, 410, disabled endpoint, dead-lettered) of one
 * webhook whose event happened since `since`, oldest first, at most `limit` per call. Each keeps its event id, so
 * receivers see the original `webhook-id`. The status flip is a conditional UPDATE, so deliveries
 * already queued by an earlier recover (now `pending`) are not queued twice. A delivery that had used
 * its whole retry schedule gets one attempt; one that never had an attempt gets the full schedule.
 */
export async function recoverDeliveries(env: Env, accountId: string, webhookId: string, input: RecoverInput, now = Date.now()): Promise<RecoverResult> {
  const shard = await accountShard(env, accountId);
  const db = shard.db;
  const hook = await db.select({ enabled: webhooks.enabled }).from(webhooks).where(and(eq(webhooks.accountId, accountId), eq(webhooks.id, webhookId))).get();
  if (!hook) throw errors.notFound("webhook");
  const since = Date.parse(input.since);
  const windowStart = recoverWindowStart(env, now);
  if (since > now) throw errors.invalidRequest("`since` is in the future.", [{ path: "since", message: "must not be in the future" }]);
  if (since < windowStart) {
    throw errors.invalidRequest(`\`since\` is older than the delivery log keeps (from ${new Date(windowStart).toISOString()}).`, [{ path: "since", message: "outside the retention window" }]);
  }
  if (!hook.enabled) throw errors.conflict("webhook_disabled", "The webhook is disabled: enable it (PUT with `enabled: true`) before recovering its deliveries.");

  // Served by deliveries_webhook_status_idx (webhook_id, status, event_id): a range over this webhook's
  // failed rows only, in the order the events happened (event ids are time-ordered; delivery ids are
  // made at fan-out, where events of one batch may get them in any order).
  const candidates = await db
    .select({ id: webhookDeliveries.id, eventId: webhookDeliveries.eventId })
    .from(webhookDeliveries)
    .where(
      and(
        eq(webhookDeliveries.webhookId, webhookId),
        eq(webhookDeliveries.status, "failed"),
        gte(webhookDeliveries.eventId, idAt("evt", since)),
        eq(webhookDeliveries.accountId, accountId),
        ne(webhookDeliveries.eventType, TEST_EVENT_TYPE),
      ),
    )
    .orderBy(asc(webhookDeliveries.eventId))
    .limit(input.limit + 1)
    .all();
  const take = candidates.slice(0, input.limit);
  const flips = chunk(take.map((c) => c.id), IDS_PER_STATEMENT).map((ids) =>
    db
      .update(webhookDeliveries)
      .set({ status: "pending", nextAttemptAt: now, queuedAt: now, leaseUntil: null, updatedAt: now })
      .where(and(inArray(webhookDeliveries.id, ids), eq(webhookDeliveries.accountId, accountId), eq(webhookDeliveries.status, "failed")))
      .returning({ id: webhookDeliveries.id }),
  );
  const [first, ...rest] = flips;
  // Only the rows this call flipped are sent: a concurrent recover gets the others, never the same ones.
  const flipped = first ? inKeyOrder((await db.batch([first, ...rest])).flat().map((r) => r.id), take.map((c) => c.id), (id) => id) : [];
  await enqueueOldestFirst(env, shard, flipped);
  return { queued: flipped.length, hasMore: candidates.length > input.limit, since: new Date(since).toISOString() };
}

async function enqueueOldestFirst(env: Env, shard: Shard, ids: string[]): Promise<void> {
  await enqueueDeliveries(env.DELIVERY_QUEUE, shard, ids.map((id) => ({ id })), "recover");
}
