import { attemptClaimed, attemptDeliveries, releaseLeases } from "./delivery.ts";
import { fanOutAndClaim, type FanOutResult } from "./fanout.ts";
import { publishToStreams } from "./stream/publish.ts";
import type { DeliveryQueueMessage, EventRecord, EventsQueueMessage } from "./types.ts";
import { chunk, QUEUE_BATCH_MAX } from "../platform/batching.ts";
import { log } from "../platform/log.ts";
import { itemsPerStatement } from "../platform/d1.ts";
import { carriedShard, shardAt, type Shard } from "../platform/shards.ts";

/**
 * Events per fan-out: its statements bind each id once or twice, beside a few parameters of their
 * own. A larger queue batch is fanned out in such parts at once.
 */
const FANOUT_PART = itemsPerStatement(2, 10);
/** First attempts made right in the events consumer per part (one queue hop less); the rest go to the delivery queue. */
const INLINE_FIRST_ATTEMPTS = 50;

/**
 * Events queue: fan each event out to its matching webhooks, taking the leases of the first
 * attempts in the same D1 batch, then make those attempts (the rest go to the delivery queue).
 * The parts of a batch run concurrently, so a batch costs about as many round trips as one part.
 * A part whose fan-out fails has its messages retried (fan-out is idempotent); messages are acked
 * only after their deliveries are recorded, so a crash before that re-delivers them (and a lease
 * taken by a crashed run expires, after which the cron re-enqueues the delivery).
 */
export async function handleEventsQueue(batch: MessageBatch<EventsQueueMessage>, env: Env, _ctx: ExecutionContext): Promise<void> {
  const valid = batch.messages.filter((m) => typeof m.body?.id === "string");
  for (const m of batch.messages) if (!valid.includes(m)) m.ack();
  // Each message names its event's shard: a part is one shard's events.
  const parts = [...byShard(valid).entries()].flatMap(([index, msgs]) => chunk(msgs, FANOUT_PART).map((part) => ({ shard: shardAt(env, index), part })));
  await Promise.all(
    parts.map(async ({ shard, part }) => {
      let fanned: FanOutResult;
      try {
        fanned = await fanOutAndClaim(shard, part.map((m) => m.body.id), INLINE_FIRST_ATTEMPTS, Date.now(), part.flatMap((m) => carriedRecord(m.body)));
      } catch (err) {
        log.error("event fan-out failed; messages retried", { count: part.length, error: String(err) });
        for (const m of part) m.retry({ delaySeconds: 2 });
        return;
      }
      for (const m of part) m.ack();
      // The live stream gets the events as soon as they are read here, beside the first attempts.
      await Promise.all([publishToStreams(env, fanned.events), enqueueWaiting(env, shard, fanned.waiting), attemptInline(env, shard, fanned)]);
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

/** The event record a queue message carries, when it is well formed and names its own id (else the record is read from D1). */
function carriedRecord(body: EventsQueueMessage): EventRecord[] {
  const e = body.event;
  if (!e || typeof e !== "object" || e.id !== body.id) return [];
  const ok = typeof e.accountId === "string" && typeof e.type === "string" && (e.sessionId === null || typeof e.sessionId === "string") && typeof e.payload === "string" && Number.isSafeInteger(e.createdAt);
  return ok ? [{ id: e.id, accountId: e.accountId, type: e.type, sessionId: e.sessionId, payload: e.payload, createdAt: e.createdAt }] : [];
}

async function enqueueWaiting(env: Env, shard: Shard, ids: string[]): Promise<void> {
  for (const part of chunk(ids, QUEUE_BATCH_MAX)) {
    await env.DELIVERY_QUEUE.sendBatch(part.map((id) => ({ body: { kind: "delivery", id, shard: shard.index } satisfies DeliveryQueueMessage, contentType: "json" as const }))).catch((err: unknown) => {
      // They are recorded as pending in D1; the cron picks up overdue deliveries.
      log.error("delivery queue send failed; the cron will enqueue", { error: String(err) });
    });
  }
}

/**
 * First attempts of the deliveries whose leases the fan-out took. If recording them fails, they
 * go to the delivery queue at once (a retried attempt is deduplicated by receivers on
 * `webhook-id`); only if that fails too do they wait for their leases to lapse and the cron.
 */
async function attemptInline(env: Env, shard: Shard, fanned: FanOutResult): Promise<void> {
  if (fanned.claimed.length === 0) return;
  try {
    await attemptClaimed(env, shard, fanned.claimed, fanned.hooks, fanned.payloads, Date.now());
  } catch (err) {
    log.error("inline delivery attempts failed; handing them to the delivery queue", { count: fanned.claimed.length, error: String(err) });
    await releaseLeases(shard, fanned.claimed.map((d) => d.id)).catch(() => {});
    await enqueueWaiting(env, shard, fanned.claimed.map((d) => d.id));
  }
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
