import { and, eq } from "drizzle-orm";
import { webhookDeliveries } from "../db/schema/index.ts";
import type { Shard } from "../platform/shards.ts";
import { enqueueDeliveries } from "./enqueue-deliveries.ts";

/** Time after an attempt's timeout within which its outcome is recorded (D1 writes, a busy isolate). */
export const RECORD_MS = 10_000;

/**
 * Whether an attempt started at `at` (the caller's clock) ends, timeout and recording included,
 * within the lease its invocation took. One that would not is not started: a turn that came late
 * (a long line at the endpoint's gate, an isolate held up) may find the lease lapsed and the
 * delivery taken by another invocation, or lose it mid-attempt, and the receiver would get it twice.
 */
export function leaseCovers(leaseUntil: number | null, at: number, timeoutMs: number): boolean {
  return leaseUntil !== null && at + timeoutMs + RECORD_MS <= leaseUntil;
}

/** Gives up the lease `d` was claimed with (unless the delivery was taken since), to be queued again. */
export function giveBack(shard: Shard, d: { id: string; leaseUntil: number | null }, now: number) {
  return shard.db
    .update(webhookDeliveries)
    .set({ leaseUntil: null, queuedAt: now, updatedAt: now })
    .where(and(eq(webhookDeliveries.id, d.id), eq(webhookDeliveries.status, "pending"), d.leaseUntil === null ? undefined : eq(webhookDeliveries.leaseUntil, d.leaseUntil)));
}

/** Late attempts' deliveries, their leases given back, on the queue again (a throttled one, `true`, where late slots are spaced). */
export async function queueAgain(env: Env, shard: Shard, late: ReadonlyMap<string, boolean>): Promise<void> {
  if (late.size === 0) return;
  await enqueueDeliveries(env.THROTTLE_QUEUE, shard, [...late].filter(([, throttled]) => throttled).map(([id]) => ({ id })), "late");
  await enqueueDeliveries(env.DELIVERY_QUEUE, shard, [...late].filter(([, throttled]) => !throttled).map(([id]) => ({ id })), "late");
}
