import { attemptDeliveries } from "./delivery.ts";
import { fanOut } from "./fanout.ts";
import type { DeliveryQueueMessage, EventsQueueMessage } from "./types.ts";

/** First attempts made right in the events consumer (one queue hop less; a full batch of 50 events with one webhook each); the rest go to the delivery queue. */
const INLINE_FIRST_ATTEMPTS = 50;

/**
 * Events queue: fan each event out to its matching webhooks, then make the first attempts. If the
 * fan-out fails the whole batch is retried (it is idempotent); the messages are acked only after
 * the deliveries are recorded, so a crash before that re-delivers them.
 */
export async function handleEventsQueue(batch: MessageBatch<EventsQueueMessage>, env: Env, _ctx: ExecutionContext): Promise<void> {
  const ids = batch.messages.map((m) => m.body?.id).filter((id): id is string => typeof id === "string");
  let deliveryIds: string[];
  try {
    deliveryIds = await fanOut(env, ids);
  } catch (err) {
    console.error(JSON.stringify({ level: "error", msg: "event fan-out failed; batch retried", count: ids.length, error: String(err) }));
    batch.retryAll({ delaySeconds: 2 });
    return;
  }
  batch.ackAll();
  const inline = deliveryIds.slice(0, INLINE_FIRST_ATTEMPTS);
  const queued = deliveryIds.slice(INLINE_FIRST_ATTEMPTS);
  for (let i = 0; i < queued.length; i += 100) {
    await env.DELIVERY_QUEUE.sendBatch(queued.slice(i, i + 100).map((id) => ({ body: { kind: "delivery", id } satisfies DeliveryQueueMessage, contentType: "json" as const }))).catch((err: unknown) => {
      // They are recorded as pending in D1; the cron picks up overdue deliveries.
      console.error(JSON.stringify({ level: "error", msg: "delivery queue send failed; the cron will enqueue", error: String(err) }));
    });
  }
  try {
    await attemptDeliveries(env, inline);
  } catch (err) {
    console.error(JSON.stringify({ level: "error", msg: "inline delivery attempts failed; the cron will retry them", count: inline.length, error: String(err) }));
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
