import { and, eq, isNotNull } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import { webhookDeliveries, type webhooks } from "../db/schema/index.ts";
import { chunk } from "../platform/batching.ts";
import { log } from "../platform/log.ts";
import { MAX_QUEUE_DELAY_SECONDS } from "./config.ts";
import { enqueueDeliveries } from "./enqueue-deliveries.ts";
import { accountShard, type Shard } from "../platform/shards.ts";

/**
 * The throttle queue's consumer waits for a slot this close ahead in the invocation that holds the
 * delivery (queue delays are whole seconds: waiting through the queue alone would bunch a second's
 * sends together). Other consumers wait at most SEND_NOW_MS and hand the rest to that queue, so
 * no other delivery waits behind a throttled one.
 */
export const SEND_AHEAD_MS = 1_000;
export const SEND_NOW_MS = 50;
/** Bounds of a webhook's `maxPerSecond` (the API validates them; the throttle object clamps again). */
export const MIN_PER_SECOND = 1;
export const MAX_PER_SECOND = 1000;
/** Slots one call may reserve (a consumer asks for at most one chunk of deliveries at a time). */
export const MAX_SLOTS_PER_CALL = 100;
/** When the throttle cannot be asked, its deliveries try again after this (no attempt is counted). */
const THROTTLE_UNAVAILABLE_DELAY_MS = 5_000;

type Delivery = typeof webhookDeliveries.$inferSelect;
/** A delivery put off to `at`: holding that slot or not; queued by its throttle object's alarm, or by us. */
interface Later {
  d: Delivery;
  at: number;
  slot: boolean;
  byAlarm?: boolean;
  /** A slot held from before (it may be past): kept as the delivery's slot. */
  keepSlot?: number;
}
type Hook = typeof webhooks.$inferSelect;
export interface Throttleable {
  d: Delivery;
  hook: Hook;
  isTest: boolean;
}
/** An attempt to make now, not before `notBefore` (its throttle slot; 0 = at once). */
export type Timed<T> = T & { notBefore: number };

/** Only real deliveries to an endpoint with a rate are throttled (a test send answers its caller at once). */
export function isThrottled(item: Throttleable): boolean {
  return item.hook.maxPerSecond !== null && !item.isTest;
}

/**
 * A delivery holds a slot when the throttle granted it and it was put off to exactly then; a retry
 * schedule, a manual retry or a recover moves `nextAttemptAt` and so needs a new slot.
 */
function holdsSlot(d: Delivery): boolean {
  return d.slotAt !== null && d.slotAt === d.nextAttemptAt;
}

/**
 * Splits leased attempts into those to make in this invocation (each at its slot) and those whose
 * slot lies further ahead: these are put off to their slot (in D1; queued by us or the throttle object) without
 * counting an attempt, touching the retry schedule or the endpoint's failure streak. Slots are asked
 * of each endpoint's WebhookThrottleDO in delivery order, so waiting deliveries keep their order.
 * `waitForSlots`: this is the throttle queue's consumer (see SEND_AHEAD_MS).
 */
export async function throttle<T extends Throttleable>(env: Env, shard: Shard, items: T[], now: number, waitForSlots: boolean): Promise<Timed<T>[]> {
  const ahead = now + (waitForSlots ? SEND_AHEAD_MS : SEND_NOW_MS);
  const send: Timed<T>[] = [];
  const later: Later[] = [];
  const byHook = new Map<string, T[]>();
  for (const item of items) {
    if (!isThrottled(item)) {
      send.push({ ...item, notBefore: 0 });
    } else if (holdsSlot(item.d)) {
      // Elsewhere than on the throttle queue a held slot is only used right on time: a late one
      // (a backlog, the cron) goes through that queue, whose consumer spaces late sends out.
      const slot = item.d.slotAt!;
      if (slot <= ahead && (waitForSlots || slot >= now - SEND_NOW_MS)) send.push({ ...item, notBefore: slot });
      else later.push({ d: item.d, at: Math.max(slot, now), slot: true, keepSlot: slot });
    } else {
      const group = byHook.get(item.hook.id);
      if (group) group.push(item);
      else byHook.set(item.hook.id, [item]);
    }
  }
  await Promise.all(
    [...byHook].map(async ([hookId, group]) => {
      group.sort((a, b) => (a.d.id < b.d.id ? -1 : 1));
      const stub = env.WEBHOOK_THROTTLES.get(env.WEBHOOK_THROTTLES.idFromName(hookId));
      for (const part of chunk(group, MAX_SLOTS_PER_CALL)) {
        let slots: { at: number; kept: boolean }[];
        try {
          slots = await stub.schedule(part[0]!.hook.maxPerSecond!, part.map((item) => item.d.id), shard.index);
        } catch (err) {
          log.error("webhook throttle unavailable; deliveries put off", { webhookId: hookId, count: part.length, error: String(err) });
          for (const item of part) later.push({ d: item.d, at: now + THROTTLE_UNAVAILABLE_DELAY_MS, slot: false });
          continue;
        }
        part.forEach((item, i) => {
          const slot = slots[i];
          if (slot === undefined) later.push({ d: item.d, at: now + THROTTLE_UNAVAILABLE_DELAY_MS, slot: false });
          else if (slot.at <= ahead && !slot.kept) send.push({ ...item, notBefore: slot.at });
          else later.push({ d: item.d, at: slot.at, slot: true, byAlarm: slot.kept });
        });
      }
    }),
  );
  if (later.length > 0) await putOff(env, shard, later, now);
  send.sort((a, b) => a.notBefore - b.notBefore);
  if (waitForSlots) spaceOut(send, ahead);
  return send;
}

/**
 * Slots that arrive late (a busy queue) would otherwise go out together: within this invocation,
 * each endpoint's sends keep at least its interval apart, as far as `limit` allows.
 */
function spaceOut<T extends Throttleable>(send: Timed<T>[], limit: number): void {
  const last = new Map<string, number>();
  for (const s of send) {
    if (!isThrottled(s)) continue;
    const prev = last.get(s.hook.id);
    const earliest = prev === undefined ? 0 : prev + 1000 / s.hook.maxPerSecond!;
    if (s.notBefore < earliest && earliest <= limit) s.notBefore = earliest;
    last.set(s.hook.id, s.notBefore);
  }
}

/** Deliveries waiting for their slot: due then, lease given up, a queue message that arrives just before it. */
async function putOff(env: Env, shard: Shard, later: Later[], now: number): Promise<void> {
  const db = shard.db;
  // The throttle object's alarm queues the deliveries it keeps (queuedAt set: the cron only steps in once overdue).
  const queueable = (l: Later) => !l.byAlarm && l.at - now <= MAX_QUEUE_DELAY_SECONDS * 1000;
  const writes: BatchItem<"sqlite">[] = later.map((l) =>
    db
      .update(webhookDeliveries)
      .set({ nextAttemptAt: l.keepSlot ?? l.at, slotAt: l.slot ? (l.keepSlot ?? l.at) : null, queuedAt: l.byAlarm || queueable(l) ? now : null, leaseUntil: null, updatedAt: now })
      .where(eq(webhookDeliveries.id, l.d.id)),
  );
  await db.batch(writes as [BatchItem<"sqlite">, ...BatchItem<"sqlite">[]]);
  // Whole seconds, rounded down: the message arrives within a second before its slot and the
  // consumer waits out the rest (SEND_AHEAD_MS), so a second's slots stay spread over it.
  const messages = later.filter(queueable).map((l) => ({ id: l.d.id, delaySeconds: Math.max(0, Math.floor((l.at - now) / 1000)) }));
  await enqueueDeliveries(env.THROTTLE_QUEUE, shard, messages, "throttle");
}

/** After an endpoint's rate changed: forget its reserved time and bring its waiting deliveries forward to ask again. */
export async function resetThrottle(env: Env, accountId: string, webhookId: string, now = Date.now()): Promise<void> {
  await env.WEBHOOK_THROTTLES.get(env.WEBHOOK_THROTTLES.idFromName(webhookId)).reset();
  await (await accountShard(env, accountId)).db
    .update(webhookDeliveries)
    .set({ nextAttemptAt: now, slotAt: null, queuedAt: null, updatedAt: now })
    .where(and(eq(webhookDeliveries.accountId, accountId), eq(webhookDeliveries.webhookId, webhookId), eq(webhookDeliveries.status, "pending"), isNotNull(webhookDeliveries.slotAt)));
}
