import { inArray } from "drizzle-orm";
import { webhookDeliveries } from "../db/schema/index.ts";
import { chunk, QUEUE_BATCH_MAX } from "../platform/batching.ts";
import { itemsPerStatement } from "../platform/d1.ts";
import { log } from "../platform/log.ts";
import type { Shard } from "../platform/shards.ts";
import type { DeliveryQueueMessage } from "./types.ts";

/** Ids one `queuedAt` reset binds (the one set value besides them). */
const IDS_PER_STATEMENT = itemsPerStatement(1, 10);

/**
 * Hands these deliveries (recorded as due in D1) to a delivery queue, a queue batch at a time. A
 * batch the queue refuses has its `queuedAt` cleared, so the cron enqueues it within a minute.
 */
export async function enqueueDeliveries(queue: Queue, shard: Shard, items: { id: string; delaySeconds?: number }[], what = "delivery"): Promise<void> {
  for (const part of chunk(items, QUEUE_BATCH_MAX)) {
    try {
      await queue.sendBatch(
        part.map((m) => ({ body: { kind: "delivery", id: m.id, shard: shard.index } satisfies DeliveryQueueMessage, contentType: "json" as const, ...(m.delaySeconds !== undefined ? { delaySeconds: m.delaySeconds } : {}) })),
      );
    } catch (err) {
      for (const ids of chunk(part.map((m) => m.id), IDS_PER_STATEMENT)) {
        await shard.db.update(webhookDeliveries).set({ queuedAt: null }).where(inArray(webhookDeliveries.id, ids));
      }
      log.error(`${what}: delivery queue send failed; the cron will enqueue`, { count: part.length, error: String(err) });
    }
  }
}
