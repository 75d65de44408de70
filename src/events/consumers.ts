import { attemptDeliveries } from "./delivery.ts";
import { claimFanOut, FANOUT_PART } from "./first-attempts.ts";
import type { DeliveryQueueMessage, EventRecord, EventsQueueMessage } from "./types.ts";
import { sendAll } from "../platform/batching.ts";
import { usageFields, withD1Usage } from "../platform/d1-usage.ts";
import { InFlight } from "../platform/in-flight.ts";
import { log } from "../platform/log.ts";
import { carriedShard, shardAt } from "../platform/shards.ts";

/** Fan-outs whose attempts run in this isolate's background at once; the next batch waits for a place. */
const ATTEMPTS_IN_FLIGHT = 4;
/** A fan-out whose attempts failed is put back on the queue this many times; then the cron's stranded-event pass has it. */
const REQUEUES_MAX = 10;

const inFlight = new InFlight(ATTEMPTS_IN_FLIGHT);
/**
 * A fan-out's attempts hold their place at most this long. Longer (a slow or hung receiver, up to the
 * webhook timeout) they go on in the background without it: one account's receivers cannot keep the
 * places, and so every other account's fan-outs, waiting.
 */
export const PLACE_HOLD_MS = 500;
/** Fan-outs going on without a place, at most (memory and open requests stay bounded); past it a slow one keeps its place. */
const DETACHED_MAX = 64;
const detached = new InFlight(DETACHED_MAX);

/**
 * Waits for `work` (which never rejects) at most PLACE_HOLD_MS. Past that, if `pool` has a place, calls
 * `leave` and answers true at once, the place held until `work` ends; else waits for `work` to end.
 */
async function holdAtMost(work: Promise<unknown>, pool: InFlight, leave: () => void): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const ended = await Promise.race([work.then(() => true), new Promise<false>((r) => (timer = setTimeout(() => r(false), PLACE_HOLD_MS)))]);
  clearTimeout(timer);
  if (ended) return false;
  const place = pool.tryAcquire();
  if (!place) {
    await work;
    return false;
  }
  leave();
  void work.finally(place);
  return true;
}

/**
 * Events queue: fan each event out to its matching webhooks and make the first attempts
 * (first-attempts.ts): a successful one writes no delivery row. The parts of a batch (one per
 * shard) run concurrently.
 *
 * A part's messages are acked once its leases are taken and the rows that must exist are written;
 * its first attempts then run in the background (`waitUntil`), up to ATTEMPTS_IN_FLIGHT fan-outs at
 * once, each holding its place at most PLACE_HOLD_MS (then up to DETACHED_MAX go on without one). So
 * the next batch, which may be another account's, never waits for this one's receivers (a slow one
 * holds its attempt up to the webhook timeout). Attempts that fail to record give up
 * their leases and their events go back on the queue with a delay (the cron's pass over stranded
 * events is the backstop, as for a run that crashed). A part that fails before the ack has its
 * messages retried, its leases given up first.
 */
export async function handleEventsQueue(batch: MessageBatch<EventsQueueMessage>, env: Env, ctx: ExecutionContext): Promise<void> {
  const valid: { m: Message<EventsQueueMessage>; units: Unit[] }[] = [];
  for (const m of batch.messages) {
    const units = unitsOf(m.body);
    if (units) valid.push({ m, units });
    else m.ack();
  }
  // Each message names its events' shard: a part is whole messages of one shard, up to FANOUT_PART events.
  const parts = [...byShard(valid.map((v) => ({ ...v, body: v.m.body }))).entries()].flatMap(([index, msgs]) => partsOf(msgs).map((part) => ({ shard: shardAt(env, index), part })));
  await Promise.all(
    parts.map(async ({ shard, part }) => {
      const release = await inFlight.acquire();
      const messages = part.map((p) => p.m);
      const units = part.flatMap((p) => p.units);
      let attempts: Promise<void>;
      try {
        const carried = new Map(units.flatMap((u) => (u.event ? [[u.id, u.event] as const] : [])));
        const claim = await claimFanOut(env, shard, units.map((u) => u.id), Date.now(), carried);
        await claim.rows();
        // Their D1 work has its own log line (the batch's line is written when the handler returns).
        attempts = withD1Usage(() => claim.attempts()).then(({ usage }) => log.info("event attempts", { queue: "texmsg-events", messages: messages.length, events: units.length, ...usageFields(usage) }));
      } catch (err) {
        release();
        log.error("event fan-out failed; messages retried", { count: messages.length, events: units.length, error: String(err) });
        for (const m of messages) m.retry({ delaySeconds: 2 });
        return;
      }
      for (const m of messages) m.ack();
      const done = attempts.catch((err: unknown) => requeue(env, shard.index, messages, err));
      ctx.waitUntil(done.finally(release));
      ctx.waitUntil(holdAtMost(done, detached, release));
    }),
  );
}

/** One event a message names, with its record when the message carries it. */
interface Unit {
  id: string;
  event?: EventRecord;
}

/** The events a message names (null: not an events message, acked and dropped). */
function unitsOf(body: EventsQueueMessage | undefined): Unit[] | null {
  if (!body || typeof body !== "object") return null;
  if (body.kind === "events") {
    if (!Array.isArray(body.ids) || body.ids.length === 0 || !body.ids.every((id) => typeof id === "string")) return null;
    const carried = new Map((Array.isArray(body.carried) ? body.carried : []).map((r) => [r.id, r]));
    return body.ids.map((id) => ({ id, event: carried.get(id) }));
  }
  if (typeof body.id !== "string") return null;
  return [{ id: body.id, event: body.event?.id === body.id ? body.event : undefined }];
}

/** Whole messages in parts of at most FANOUT_PART events (a message never names more). */
function partsOf<T extends { units: Unit[] }>(msgs: T[]): T[][] {
  const parts: T[][] = [];
  let part: T[] = [];
  let n = 0;
  for (const m of msgs) {
    if (part.length > 0 && n + m.units.length > FANOUT_PART) {
      parts.push(part);
      part = [];
      n = 0;
    }
    part.push(m);
    n += m.units.length;
  }
  if (part.length > 0) parts.push(part);
  return parts;
}

/** The messages of a fan-out whose attempts failed, back on the queue in 2 s (each message's count of such returns kept on it). */
async function requeue(env: Env, shard: number, part: Message<EventsQueueMessage>[], err: unknown): Promise<void> {
  const again = part.filter((m) => (m.body.requeues ?? 0) < REQUEUES_MAX);
  log.error("event fan-out attempts failed; events queued again", { count: part.length, requeued: again.length, error: String(err) });
  await sendAll(
    env.EVENTS_QUEUE,
    again.map((m) => ({ body: { ...m.body, shard, requeues: (m.body.requeues ?? 0) + 1 } satisfies EventsQueueMessage, contentType: "v8" as const, delaySeconds: 2 })),
  ).catch((e: unknown) => log.error("event requeue failed; the cron will enqueue", { count: again.length, error: String(e) }));
}

/** Messages by the shard they name (a message without one is shard 0's). */
function byShard<M extends { body: { shard?: number } }>(messages: M[]): Map<number, M[]> {
  const out = new Map<number, M[]>();
  for (const m of messages) {
    const index = carriedShard(m.body.shard);
    const list = out.get(index);
    if (list) list.push(m);
    else out.set(index, [m]);
  }
  return out;
}

/**
 * Delivery queue: the batch's attempts together (two D1 round trips for all, receivers called
 * concurrently); if recording them fails, the whole batch is retried (leases make that safe). A batch
 * whose attempts take longer than PLACE_HOLD_MS (a slow or hung receiver) is acked then and goes on in
 * the background, so the next batch, which may be another account's, never waits for this one's receivers.
 */
export async function handleDeliveryQueue(batch: MessageBatch<DeliveryQueueMessage>, env: Env, ctx: ExecutionContext): Promise<void> {
  await attemptBatch(batch, env, ctx, false);
}

/**
 * Throttle queue: deliveries whose endpoint's slot is near. The same attempts, but this consumer
 * waits out slots up to a second ahead (throttle.ts), so only throttled deliveries wait behind it.
 */
export async function handleThrottledQueue(batch: MessageBatch<DeliveryQueueMessage>, env: Env, ctx: ExecutionContext): Promise<void> {
  // its attempts wait for their slots by design: a batch holds its invocation to the end
  await attemptBatch(batch, env, ctx, true);
}

/** Delivery batches going on in the background at once, at most; past it a slow batch holds its invocation as before. */
const detachedDeliveries = new InFlight(DETACHED_MAX);

async function attemptBatch(batch: MessageBatch<DeliveryQueueMessage>, env: Env, ctx: ExecutionContext, waitForSlots: boolean): Promise<void> {
  const valid = batch.messages.filter((m) => typeof m.body?.id === "string");
  for (const m of batch.messages) if (typeof m.body?.id !== "string") m.ack();
  // Shard by shard, each isolated: a shard that fails has only its own messages retried.
  await Promise.all(
    [...byShard(valid).entries()].map(async ([index, msgs]) => {
      let detached = false;
      const work = attemptDeliveries(env, shardAt(env, index), msgs.map((m) => m.body.id), Date.now(), waitForSlots).then(
        () => {
          if (!detached) for (const m of msgs) m.ack();
        },
        (err: unknown) => {
          // Acked already when detached: the deliveries stay pending, and the cron's pass over overdue ones
          // queues them again once their leases lapse (as after a consumer that crashed).
          log.error("delivery attempts failed", { shard: index, count: msgs.length, detached, error: String(err) });
          if (!detached) for (const m of msgs) m.retry({ delaySeconds: 5 });
        },
      );
      if (waitForSlots) return work;
      const left = await holdAtMost(work, detachedDeliveries, () => {
        detached = true;
        for (const m of msgs) m.ack();
      });
      if (left) ctx.waitUntil(work);
    }),
  );
}
