import { and, eq, inArray, sql } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import { webhookAttempts, webhookDeliveries, webhooks } from "../db/schema/index.ts";
import { itemsPerStatement } from "../platform/d1.ts";
import type { Shard } from "../platform/shards.ts";
import type { SignedPostResult } from "./send-attempt.ts";

/** A delivery attempt the receiver answered with a 2xx, as recorded. */
export interface Success {
  deliveryId: string;
  accountId: string;
  webhook: { id: string; accountId: string; failingSince: number | null };
  attempt: number;
  attemptId: string;
  result: SignedPostResult;
  doneAt: number;
}

/** Attempt rows per INSERT: 10 columns each. */
const ATTEMPTS_PER_INSERT = itemsPerStatement(10);
/** Deliveries per UPDATE: each id one parameter, beside the statement's own. */
const IDS_PER_UPDATE = itemsPerStatement(1, 10);

/**
 * The records of successful attempts in a few statements, whatever their number (a busy receiver's
 * first attempts are nearly all successes): their attempt rows in multi-row INSERTs; their
 * deliveries, which end `succeeded`, in one UPDATE per status code and error (the attempt count
 * moves by one under the lease the caller holds); each webhook's failure streak ended once, unless
 * the same round had a failure of that webhook (`failedHooks`): the streak then stands.
 */
export function successWrites(shard: Shard, successes: Success[], failedHooks: ReadonlySet<string>): BatchItem<"sqlite">[] {
  if (successes.length === 0) return [];
  const db = shard.db;
  const out: BatchItem<"sqlite">[] = [];
  const rows = successes.map((s) => ({
    id: s.attemptId,
    deliveryId: s.deliveryId,
    accountId: s.accountId,
    attempt: s.attempt,
    statusCode: s.result.statusCode,
    durationMs: s.result.durationMs,
    error: s.result.error,
    responseBody: s.result.responseBody,
    nextAttemptAt: null,
    createdAt: s.doneAt,
  }));
  for (let i = 0; i < rows.length; i += ATTEMPTS_PER_INSERT) out.push(db.insert(webhookAttempts).values(rows.slice(i, i + ATTEMPTS_PER_INSERT)));
  const groups = new Map<string, Success[]>();
  for (const s of successes) {
    const key = JSON.stringify([s.result.statusCode, s.result.error]);
    groups.set(key, [...(groups.get(key) ?? []), s]);
  }
  for (const group of groups.values()) {
    const { statusCode, error } = group[0]!.result;
    const updatedAt = Math.max(...group.map((s) => s.doneAt));
    for (let i = 0; i < group.length; i += IDS_PER_UPDATE) {
      const ids = group.slice(i, i + IDS_PER_UPDATE).map((s) => s.deliveryId);
      out.push(
        db
          .update(webhookDeliveries)
          .set({ status: "succeeded", attempts: sql`${webhookDeliveries.attempts} + 1`, nextAttemptAt: null, queuedAt: null, leaseUntil: null, lastStatusCode: statusCode, lastError: error, updatedAt })
          .where(inArray(webhookDeliveries.id, ids)),
      );
    }
  }
  const failing = new Map(successes.filter((s) => s.webhook.failingSince !== null && !failedHooks.has(s.webhook.id)).map((s) => [s.webhook.id, s.webhook]));
  for (const hook of failing.values()) out.push(db.update(webhooks).set({ failingSince: null }).where(and(eq(webhooks.id, hook.id), eq(webhooks.accountId, hook.accountId))));
  return out;
}
