import { attemptClaimed, attemptDeliveries } from "./delivery.ts";
import { fanOutAndClaim, type FanOutResult } from "./fanout.ts";
import type { DeliveryQueueMessage, EventsQueueMessage } from "./types.ts";
import { chunk, QUEUE_BATCH_MAX } from "../platform/batching.ts";

/** First attempts made right in the events consumer (one queue hop less; a full batch of 50 events with one webhook each); the rest go to the delivery queue. */
const INLINE_FIRST_ATTEMPTS = 50;

/**
 * Events queue: fan each event out to its matching webhooks, taking the leases of the first
 * attempts in the same D1 batch, then make those attempts (the rest go to the delivery queue). If
 * the fan-out fails the whole batch is retried (it is idempotent); the messages are acked only
 * after the deliveries are recorded, so a crash before that re-delivers them (and a lease taken by
 * the crashed run expires, after which the cron re-enqueues the delivery).
 */
export async function handleEventsQueue(batch: MessageBatch<EventsQueueMessage>, env: Env, _ctx: ExecutionContext): Promise<void> {
  const ids = batch.messages.map((m) => m.body?.id).filter((id): id is string => typeof id === "string");
  let fanned: FanOutResult;
  try {
    fanned = await fanOutAndClaim(env, ids, INLINE_FIRST_ATTEMPTS);
  } catch (err) {
    console.error(JSON.stringify({ level: "error", msg: "event fan-out failed; batch retried", count: ids.length, error: String(err) }));
    batch.retryAll({ delaySeconds: 2 });
    return;
  }
  batch.ackAll();
  const queued = fanned.waiting;
  for (const part of chunk(queued, QUEUE_BATCH_MAX)) {
    await env.DELIVERY_QUEUE.sendBatch(part.map((id) => ({ body: { kind: "delivery", id } satisfies DeliveryQueueMessage, contentType: "json" as const }))).catch((err: unknown) => {
      // They are recorded as pending in D1; the cron picks up overdue deliveries.
      console.error(JSON.stringify({ level: "error", msg: "delivery queue send failed; the cron will enqueue", error: String(err) }));
    });
  }
  try {
    await attemptClaimed(env, fanned.claimed, fanned.hooks, fanned.payloads, Date.now());
  } catch (err) {
    console.error(JSON.stringify({ level: "error", msg: "inline delivery attempts failed; the cron will retry them once their leases expire", count: fanned.claimed.length, error: String(err) }));
  }
}

/**
 * Delivery queue: the batch's attempts together (two D1 round trips for all, receivers called
 * concurrently); if recording them fails, the whole batch is retried (leases make that safe).
 */
export async function handleDeliveryQueue(batch: MessageBatch<DeliveryQueueMessage>, env: Env, _ctx: ExecutionContext): Promise<void> {
  const ids: string[] = [];
  for (const msg of batch.messages) {
    const id = msg.body?.id;
    if (typeof id === "string") ids.push(id);
    else msg.ack();
  }
  try {
    await attemptDeliveries(env, ids);
    batch.ackAll();
  } catch (err) {
    console.error(JSON.stringify({ level: "error", msg: "delivery attempts failed", count: ids.length, error: String(err) }));
    batch.retryAll({ delaySeconds: 5 });
  }
}
