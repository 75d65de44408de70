import { and, eq } from "drizzle-orm";
import { webhookDeliveries } from "../db/schema/index.ts";
import { carriedShard, shardAt } from "../platform/shards.ts";

/**
 * Called (wired in src/queues.ts) for every dead-lettered message: a delivery whose
 * queue message failed every consumer retry is marked failed (visible in the log, retryable by
 * hand). Dead events stay un-fanned in D1 and the cron re-enqueues them a bounded number of times.
 */
export async function onEventsDeadLetter(env: Env, body: unknown, now = Date.now()): Promise<void> {
  if (!body || typeof body !== "object") return;
  const { kind, id, shard } = body as { kind?: unknown; id?: unknown; shard?: unknown };
  if (kind !== "delivery" || typeof id !== "string") return;
  await shardAt(env, carriedShard(shard)).db
    .update(webhookDeliveries)
    .set({ status: "failed", lastError: "dead-lettered after repeated consumer errors", nextAttemptAt: null, queuedAt: null, leaseUntil: null, updatedAt: now })
    .where(and(eq(webhookDeliveries.id, id), eq(webhookDeliveries.status, "pending")));
}
