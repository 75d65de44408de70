import { and, eq, sql } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import { webhookDeliveries, webhooks } from "../db/schema/index.ts";
import { jsonColumns, jsonParts } from "../platform/d1.ts";
import type { Shard } from "../platform/shards.ts";
import type { SignedPostResult } from "./send-attempt.ts";

/** A delivery attempt the receiver answered with a 2xx, as recorded. */
export interface Success {
  deliveryId: string;
  accountId: string;
  webhook: { id: string; accountId: string; failingSince: number | null };
  attempt: number;
  result: SignedPostResult;
  doneAt: number;
}

/**
 * The records of successful attempts in a few statements, whatever their number (a busy receiver's
 * first attempts are nearly all successes). A success writes no `webhook_attempts` row (there is
 * nothing to debug in it): its delivery row keeps the outcome (status code, duration, attempt
 * count) and the delivery log shows that as its last attempt. The deliveries, which end
 * `succeeded`, in one UPDATE per JSON part (`jsonParts`: one bound parameter however many rows; the
 * attempt count moves by one under the lease the caller holds); each webhook's failure streak ended
 * once, unless the same round had a failure of that webhook (`failedHooks`): the streak then stands.
 */
export function successWrites(shard: Shard, successes: Success[], failedHooks: ReadonlySet<string>): BatchItem<"sqlite">[] {
  if (successes.length === 0) return [];
  const db = shard.db;
  const out: BatchItem<"sqlite">[] = [];
  const rows = successes.map((s) => ({ id: s.deliveryId, c: s.result.statusCode, e: s.result.error, d: s.result.durationMs, t: s.doneAt }));
  const field = (k: string) => sql.raw(`json_extract(j.value, '$.${k}')`);
  for (const part of jsonParts(rows)) {
    out.push(
      db
        .update(webhookDeliveries)
        .set({ status: "succeeded", attempts: sql`${webhookDeliveries.attempts} + 1`, nextAttemptAt: null, queuedAt: null, leaseUntil: null, lastStatusCode: field("c"), lastError: field("e"), lastDurationMs: field("d"), updatedAt: field("t") })
        .from(sql`json_each(${part}) AS j`)
        .where(sql`${webhookDeliveries.id} = ${field("id")}`),
    );
  }
  return [...out, ...streakEnds(shard, successes, failedHooks)];
}

/** Each webhook's failure streak ended by these successes, once, unless the same round had a failure of that webhook. */
export function streakEnds(shard: Shard, successes: Success[], failedHooks: ReadonlySet<string>): BatchItem<"sqlite">[] {
  const db = shard.db;
  const out: BatchItem<"sqlite">[] = [];
  const failing = new Map(successes.filter((s) => s.webhook.failingSince !== null && !failedHooks.has(s.webhook.id)).map((s) => [s.webhook.id, s.webhook]));
  for (const hook of failing.values()) out.push(db.update(webhooks).set({ failingSince: null }).where(and(eq(webhooks.id, hook.id), eq(webhooks.accountId, hook.accountId))));
  return out;
}

/** The deliveries table's columns in its order (an INSERT ... SELECT names them all). */
const DELIVERY = jsonColumns(webhookDeliveries);

/** New delivery rows as multi-row INSERTs, the rows one JSON parameter each (a few statements however many); an existing (event, webhook) is left alone. */
export function insertDeliveries(shard: Shard, rows: (typeof webhookDeliveries.$inferInsert)[]): BatchItem<"sqlite">[] {
  return jsonParts(rows.map(DELIVERY.rowJson)).map((part) =>
    shard.db
      .insert(webhookDeliveries)
      .select(sql`SELECT ${DELIVERY.extracts} FROM json_each(${part}) AS j WHERE true`)
      .onConflictDoNothing(),
  );
}
