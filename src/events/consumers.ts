import { attemptDeliveries } from "./delivery.ts";
import { fanOutFirstAttempts } from "./first-attempts.ts";
import type { DeliveryQueueMessage, EventsQueueMessage } from "./types.ts";
import { chunk, QUEUE_BATCH_MAX } from "../platform/batching.ts";
import { log } from "../platform/log.ts";
import { carriedShard, shardAt } from "../platform/shards.ts";

/** Events per fan-out: a whole queue batch of one shard (its statements bind the ids as one JSON parameter). */
const FANOUT_PART = QUEUE_BATCH_MAX;

/**
 * Events queue: fan each event out to its matching webhooks and make the first attempts
 * (first-attempts.ts): a successful one writes no delivery row. The parts of a batch (one per
 * shard) run concurrently. Messages are acked once their outcomes are recorded; a part that fails
 * has its messages retried (its leases given up first; a lease a crashed run took lapses, after
 * which the cron re-enqueues the event).
 */
export async function handleEventsQueue(batch: MessageBatch<EventsQueueMessage>, env: Env, _ctx: ExecutionContext): Promise<void> {
  const valid = batch.messages.filter((m) => typeof m.body?.id === "string");
  for (const m of batch.messages) if (!valid.includes(m)) m.ack();
  // Each message names its event's shard: a part is one shard's events.
  const parts = [...byShard(valid).entries()].flatMap(([index, msgs]) => chunk(msgs, FANOUT_PART).map((part) => ({ shard: shardAt(env, index), part })));
  await Promise.all(
    parts.map(async ({ shard, part }) => {
      try {
        const carried = new Map(part.flatMap((m) => (m.body.event?.id === m.body.id ? [[m.body.id, m.body.event] as const] : [])));
        await fanOutFirstAttempts(env, shard, part.map((m) => m.body.id), Date.now(), carried);
      } catch (err) {
        log.error("event fan-out failed; messages retried", { count: part.length, error: String(err) });
        for (const m of part) m.retry({ delaySeconds: 2 });
        return;
      }
      for (const m of part) m.ack();
    }),
  );
}

/** Messages by the shard they name (a message without one is shard 0's). */
function byShard<M extends { body: { shard?: number } }>(messages: M[]): Map<number, M[]> {
  const out = new Map<number, M[]>();
  for (const m of messages) {
    const index = carriedShard(m.body.shard);
    out.set(index, [...(out.get(index) ?? []), m]);
  }
  return out;
}

/**
 * Delivery queue: the batch's attempts together (two D1 round trips for all, receivers called
 * concurrently); if recording them fails, the whole batch is retried (leases make that safe).
 */
export async function handleDeliveryQueue(batch: MessageBatch<DeliveryQueueMessage>, env: Env, _ctx: ExecutionContext): Promise<void> {
  await attemptBatch(batch, env, false);
}

/**
 * Throttle queue: deliveries whose endpoint's slot is near. The same attempts, but this consumer
 * waits out slots up to a second ahead (throttle.ts), so only throttled deliveries wait behind it.
 */
export async function handleThrottledQueue(batch: MessageBatch<DeliveryQueueMessage>, env: Env, _ctx: ExecutionContext): Promise<void> {
  await attemptBatch(batch, env, true);
}

async function attemptBatch(batch: MessageBatch<DeliveryQueueMessage>, env: Env, waitForSlots: boolean): Promise<void> {
  const valid = batch.messages.filter((m) => typeof m.body?.id === "string");
  for (const m of batch.messages) if (!valid.includes(m)) m.ack();
  // Shard by shard, each isolated: a shard that fails has only its own messages retried.
  await Promise.all(
    [...byShard(valid).entries()].map(async ([index, msgs]) => {
      try {
        await attemptDeliveries(env, shardAt(env, index), msgs.map((m) => m.body.id), Date.now(), waitForSlots);
        for (const m of msgs) m.ack();
      } catch (err) {
        log.error("delivery attempts failed", { shard: index, count: msgs.length, error: String(err) });
        for (const m of msgs) m.retry({ delaySeconds: 5 });
      }
    }),
  );
}
