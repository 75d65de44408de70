import { attemptDelivery } from "./delivery.ts";
import { fanOut } from "./fanout.ts";
import type { DeliveryQueueMessage, EventsQueueMessage } from "./types.ts";

/** A Worker invocation keeps at most 6 connections open; more would only queue inside the runtime. */
const CONCURRENCY = 6;
/** First attempts made right in the events consumer (one queue hop less); the rest go to the delivery queue. */
const INLINE_FIRST_ATTEMPTS = 24;

async function pool<T>(items: T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const workers = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) await fn(items[next++]!);
  });
  await Promise.all(workers);
}

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
  await pool(inline, CONCURRENCY, async (id) => {
    try {
      await attemptDelivery(env, id);
    } catch (err) {
      console.error(JSON.stringify({ level: "error", msg: "inline delivery attempt failed; the cron will retry it", deliveryId: id, error: String(err) }));
    }
  });
}

/** Delivery queue: one attempt per message; a consumer error retries that message alone. */
export async function handleDeliveryQueue(batch: MessageBatch<DeliveryQueueMessage>, env: Env, _ctx: ExecutionContext): Promise<void> {
  await pool(batch.messages as Message<DeliveryQueueMessage>[], CONCURRENCY, async (msg) => {
    const id = msg.body?.id;
    if (typeof id !== "string") return msg.ack();
    try {
      await attemptDelivery(env, id);
      msg.ack();
    } catch (err) {
      console.error(JSON.stringify({ level: "error", msg: "delivery attempt failed", deliveryId: id, error: String(err) }));
      msg.retry({ delaySeconds: 5 });
    }
  });
}
