import { and, eq, inArray, isNull, lt, or, sql } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import { events, webhookDeliveries, webhooks } from "../db/schema/index.ts";
import { insertDeliveries, type Success } from "./attempt-writes.ts";
import { attemptClaimed, attemptDeliveries, type DeliveryRow } from "./delivery.ts";
import { leaseMs } from "./config.ts";
import { deliveriesOf } from "./fanout.ts";
import { foldedId, type FoldedDelivery } from "./folded.ts";
import { publishToStreams, type CommittedEvent } from "./stream/publish.ts";
import type { DeliveryQueueMessage, EventRecord } from "./types.ts";
import { chunk, QUEUE_BATCH_MAX } from "../platform/batching.ts";
import { EVENTS_PER_MESSAGE } from "./queue-groups.ts";
import { jsonParts } from "../platform/d1.ts";
import { log } from "../platform/log.ts";
import type { Shard } from "../platform/shards.ts";

/** Events per fan-out: up to two full queue group messages (its statements bind the ids as one JSON parameter). */
export const FANOUT_PART = 2 * EVENTS_PER_MESSAGE;

/** First attempts made right here per fan-out (the others wait on the delivery queue, each with its row). */
const INLINE_MAX = 200;

/** A fan-out whose leases are taken: its rows, then its attempts (see `claimFanOut`). */
export interface FanOutClaim {
  /** Rows of the deliveries that wait (on the delivery queue or a throttle), and their queue messages. */
  rows(): Promise<void>;
  /** Called right after `rows`: the throttled attempts, the live stream, the inline first attempts, the events marked fanned out. */
  attempts(): Promise<void>;
}

/**
 * The events consumer's fan-out: a few statements per queue batch, and a delivery row only where
 * one is needed.
 *
 * 1. `claimFanOut`, one round trip: takes the events' fan-out lease (only events not fanned out and
 *    not held: a duplicate message finds nothing to do) and reads their accounts' webhooks.
 * 2. `rows`: deliveries to endpoints that are disabled, throttled or past INLINE_MAX get their rows;
 *    the unthrottled ones go to the delivery queue.
 * 3. `attempts`: the throttled ones take their slots at their endpoints' throttles. The others are
 *    attempted at once, without a row: one that succeeds is folded onto its event row
 *    (`folded.ts`); one that does not gets its row with its outcome. The same batch marks the
 *    events fanned out and gives up the leases.
 *
 * `attempts` waits for receivers (a slow one up to its timeout), so a consumer may run it in the
 * background once `rows` is done. A crash before step 3 commits leaves the events leased and not
 * fanned out: the lease lapses, the cron puts them back on the queue, and the attempts are made
 * again (same `webhook-id`: receivers deduplicate). A failed step gives up the event leases it
 * still holds and throws. Events that were already fanned out (a re-delivered message) have their
 * deliveries still waiting for a first attempt attempted (those of a run that crashed after
 * writing them).
 */
export async function claimFanOut(env: Env, shard: Shard, eventIds: string[], now = Date.now(), carried: ReadonlyMap<string, EventRecord> = new Map()): Promise<FanOutClaim> {
  const ids = [...new Set(eventIds)];
  if (ids.length === 0) return { rows: async () => {}, attempts: async () => {} };
  const db = shard.db;
  const inIds = sql`${events.id} IN (SELECT value FROM json_each(${JSON.stringify(ids)}))`;
  // `+` keeps SQLite on the primary key: on the index of events not fanned out yet it read the
  // whole backlog for each batch (a large send's events: a cost growing with its square).
  const lease = db
    .update(events)
    .set({ fanoutLeaseUntil: now + leaseMs(env) })
    .where(and(inIds, isNull(sql`+${events.fannedOutAt}`), or(isNull(events.fanoutLeaseUntil), lt(events.fanoutLeaseUntil, now))));
  const hooksOf = db.select().from(webhooks).where(inArray(webhooks.accountId, db.select({ accountId: events.accountId }).from(events).where(inIds)));
  let claimed: (CommittedEvent & { createdAt: number })[];
  let hooks: (typeof webhooks.$inferSelect)[];
  if (ids.every((id) => carried.has(id))) {
    // The queue brought every record: the lease returns ids only, not each payload again.
    const [leased, found] = await db.batch([lease.returning({ id: events.id }), hooksOf]);
    claimed = leased.map((l) => carried.get(l.id)!);
    hooks = found;
  } else {
    [claimed, hooks] = await db.batch([lease.returning({ id: events.id, accountId: events.accountId, type: events.type, sessionId: events.sessionId, payload: events.payload, createdAt: events.createdAt }), hooksOf]);
  }
  const claimedIds = new Set(claimed.map((e) => e.id));
  const unclaimed = ids.filter((id) => !claimedIds.has(id));
  const plan = claimed.length > 0 ? planFanOut(claimed, hooks, now, leaseMs(env)) : null;
  const giveUp = async (err: unknown) => {
    await releaseEventLeases(shard, claimed);
    throw err;
  };
  return {
    rows: async () => {
      if (plan) await waitingRows(env, shard, plan).catch(giveUp);
    },
    attempts: async () => {
      await Promise.all([unclaimed.length > 0 ? attemptLeftOver(env, shard, unclaimed, now) : null, plan ? firstAttempts(env, shard, plan, now).catch(giveUp) : null]);
    },
  };
}

interface FanOutPlan {
  claimed: (CommittedEvent & { createdAt: number })[];
  hooks: (typeof webhooks.$inferSelect)[];
  /** Attempted right here, without a row unless they fail. */
  inline: DeliveryRow[];
  /** With their rows: to the delivery queue. */
  queued: DeliveryRow[];
  /** With their rows: to their endpoints' throttles. */
  throttled: DeliveryRow[];
}

function planFanOut(claimed: (CommittedEvent & { createdAt: number })[], hooks: (typeof webhooks.$inferSelect)[], now: number, lease: number): FanOutPlan {
  const hookById = new Map(hooks.map((h) => [h.id, h]));
  const plan: FanOutPlan = { claimed, hooks, inline: [], queued: [], throttled: [] };
  for (const d of deliveriesOf(claimed, hooks, now)) {
    const hook = hookById.get(d.webhookId)!;
    if (hook.enabled && hook.maxPerSecond !== null) plan.throttled.push(d);
    else if (plan.inline.length < INLINE_MAX && hook.enabled) plan.inline.push({ ...d, leaseUntil: now + lease });
    else plan.queued.push(d);
  }
  return plan;
}

/** Their rows first: once the events are marked fanned out, nothing else would make them. */
async function waitingRows(env: Env, shard: Shard, plan: FanOutPlan): Promise<void> {
  const rows = [...plan.queued, ...plan.throttled];
  if (rows.length > 0) await shard.db.batch(insertDeliveries(shard, rows) as [BatchItem<"sqlite">, ...BatchItem<"sqlite">[]]);
  await enqueue(env, shard, plan.queued.map((d) => d.id));
}

async function firstAttempts(env: Env, shard: Shard, plan: FanOutPlan, now: number): Promise<void> {
  const { claimed, inline, hooks } = plan;
  const finish = (successes: Success[]) => fannedOut(shard, claimed, inline, successes, now);
  await Promise.all([
    // Throttled ones take their slots now (the throttle object then makes each attempt at its slot): a
    // queue hop first would hand out the slots late, leaving gaps in the endpoint's rate.
    attemptDeliveries(env, shard, plan.throttled.map((d) => d.id), now),
    // The live stream gets the events as soon as they are read here, beside the first attempts.
    publishToStreams(env, claimed),
    inline.length > 0 ? attemptClaimed(env, shard, inline, hooks, claimed, now, false, { finish }) : shard.db.batch(finish([]) as [BatchItem<"sqlite">, ...BatchItem<"sqlite">[]]),
  ]);
}

/** Gives up the fan-out leases of events not fanned out yet (best effort: a lease left lapses). */
async function releaseEventLeases(shard: Shard, claimed: { id: string }[]): Promise<void> {
  await shard.db
    .update(events)
    .set({ fanoutLeaseUntil: null })
    .where(and(sql`${events.id} IN (SELECT value FROM json_each(${JSON.stringify(claimed.map((e) => e.id))}))`, isNull(sql`+${events.fannedOutAt}`)))
    .catch(() => {});
}

/** The events fanned out, each with its successes folded on (`folded.ts`), their leases given up: one statement per JSON part. */
function fannedOut(shard: Shard, claimed: CommittedEvent[], inline: DeliveryRow[], successes: Success[], now: number): BatchItem<"sqlite">[] {
  const rowById = new Map(inline.map((d) => [d.id, d]));
  const ok = new Map<string, FoldedDelivery[]>();
  for (const s of successes) {
    const d = rowById.get(s.deliveryId)!;
    const entry: FoldedDelivery = { id: foldedId(d.eventId, d.webhookId), w: d.webhookId, c: s.result.statusCode, d: s.result.durationMs, t: s.doneAt };
    ok.set(d.eventId, [...(ok.get(d.eventId) ?? []), entry]);
  }
  const field = (k: string) => sql.raw(`json_extract(j.value, '$.${k}')`);
  return jsonParts(claimed.map((e) => ({ id: e.id, ok: ok.get(e.id) ?? null }))).map((part) =>
    shard.db
      .update(events)
      .set({ fannedOutAt: sql`coalesce(${events.fannedOutAt}, ${now})`, fanoutLeaseUntil: null, delivered: field("ok") })
      .from(sql`json_each(${part}) AS j`)
      .where(sql`${events.id} = ${field("id")}`),
  );
}

/** Deliveries of already fanned-out events still waiting for a first attempt nobody holds: attempted now. */
async function attemptLeftOver(env: Env, shard: Shard, eventIds: string[], now: number): Promise<void> {
  const waiting = await shard.db
    .select({ id: webhookDeliveries.id })
    .from(webhookDeliveries)
    .where(
      and(
        sql`${webhookDeliveries.eventId} IN (SELECT value FROM json_each(${JSON.stringify(eventIds)}))`,
        // `+`: by event id (its unique index), never the scan of every pending delivery.
        eq(sql`+${webhookDeliveries.status}`, "pending"),
        eq(webhookDeliveries.attempts, 0),
        or(isNull(webhookDeliveries.leaseUntil), lt(webhookDeliveries.leaseUntil, now)),
      ),
    );
  if (waiting.length > 0) await attemptDeliveries(env, shard, waiting.map((w) => w.id), now);
}

async function enqueue(env: Env, shard: Shard, ids: string[]): Promise<void> {
  for (const part of chunk(ids, QUEUE_BATCH_MAX)) {
    await env.DELIVERY_QUEUE.sendBatch(part.map((id) => ({ body: { kind: "delivery", id, shard: shard.index } satisfies DeliveryQueueMessage, contentType: "json" as const }))).catch((err: unknown) => {
      // They are recorded as pending in D1; the cron picks up overdue deliveries.
      log.error("delivery queue send failed; the cron will enqueue", { error: String(err) });
    });
  }
}
