import { and, asc, eq, gte, inArray, isNull, lt, lte, or, sql } from "drizzle-orm";
import { events, webhookDeliveries } from "../db/schema/index.ts";
import { enqueueEvents } from "./emit.ts";
import type { DeliveryQueueMessage } from "./types.ts";
import { sendAll } from "../platform/batching.ts";
import { itemsPerStatement } from "../platform/d1.ts";
import { eachShard, type Shard } from "../platform/shards.ts";

/** A delivery this overdue with no attempt in flight lost its queue message (or its consumer crashed). */
const OVERDUE_MS = 2 * 60_000;
/** An event not fanned out after this long lost its queue message. */
const STRANDED_EVENT_MS = 2 * 60_000;
const MAX_EVENT_REQUEUES = 5;
const BATCH = 500;
/** Ids per UPDATE, with room for the statement's own parameters. */
const IDS_PER_UPDATE = itemsPerStatement(1, 10);

/** Every minute: enqueue deliveries that are due (long waits kept in D1, lost messages) and stranded events. */
export async function onCronEvents(env: Env, now: number): Promise<void> {
  await eachShard(env, "events", async (shard) => {
    await requeueDueDeliveries(env, shard, now);
    await requeueStrandedEvents(env, shard, now);
  });
}

export async function requeueDueDeliveries(env: Env, shard: Shard, now: number): Promise<number> {
  const db = shard.db;
  const due = await db
    .select({ id: webhookDeliveries.id, nextAttemptAt: webhookDeliveries.nextAttemptAt })
    .from(webhookDeliveries)
    .where(
      and(
        eq(webhookDeliveries.status, "pending"),
        lte(webhookDeliveries.nextAttemptAt, now + 60_000),
        or(isNull(webhookDeliveries.leaseUntil), lt(webhookDeliveries.leaseUntil, now)),
        or(isNull(webhookDeliveries.queuedAt), lt(webhookDeliveries.nextAttemptAt, now - OVERDUE_MS)),
      ),
    )
    .orderBy(asc(webhookDeliveries.nextAttemptAt), asc(webhookDeliveries.id))
    .limit(BATCH);
  await sendAll(
    env.DELIVERY_QUEUE,
    due.map((d) => ({ body: { kind: "delivery", id: d.id, shard: shard.index } satisfies DeliveryQueueMessage, contentType: "json" as const, delaySeconds: Math.max(0, Math.ceil(((d.nextAttemptAt ?? now) - now) / 1000)) })),
  );
  for (let i = 0; i < due.length; i += IDS_PER_UPDATE) {
    await db.update(webhookDeliveries).set({ queuedAt: now }).where(inArray(webhookDeliveries.id, due.slice(i, i + IDS_PER_UPDATE).map((d) => d.id)));
  }
  return due.length;
}

export async function requeueStrandedEvents(env: Env, shard: Shard, now: number): Promise<number> {
  const db = shard.db;
  const stranded = await db
    .select({ id: events.id })
    .from(events)
    .where(and(isNull(events.fannedOutAt), lt(events.createdAt, now - STRANDED_EVENT_MS), lt(events.requeues, MAX_EVENT_REQUEUES), gte(events.createdAt, now - 7 * 86400_000)))
    .orderBy(asc(events.createdAt), asc(events.id))
    .limit(BATCH);
  if (stranded.length === 0) return 0;
  const ids = stranded.map((e) => e.id);
  if (!(await enqueueEvents(env, shard, ids))) return 0;
  for (let i = 0; i < ids.length; i += IDS_PER_UPDATE) {
    await db.update(events).set({ requeues: sql`${events.requeues} + 1` }).where(inArray(events.id, ids.slice(i, i + IDS_PER_UPDATE)));
  }
  return ids.length;
}
