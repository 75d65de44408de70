import { daysAgo, purgeBatch, retention } from "../platform/retention.ts";
import { eachShard } from "../platform/shards.ts";
import { purgeExpiredTickets } from "./stream/tickets.ts";

/**
 * Cron: the events module's share of retention. Attempts and finished deliveries past their days go;
 * an event goes once no delivery of it is still pending (a delivery reads its event to send it).
 */
export async function purgeExpiredEventRows(env: Env, now: number): Promise<void> {
  const r = retention(env);
  await purgeExpiredTickets(env, now);
  await eachShard(env, "events.retention", async ({ d1 }) => {
  if (r.RETENTION_WEBHOOK_ATTEMPTS_DAYS !== null) {
    await purgeBatch(d1, { table: "webhook_attempts", prefix: "att", before: daysAgo(now, r.RETENTION_WEBHOOK_ATTEMPTS_DAYS) });
  }
  if (r.RETENTION_WEBHOOK_DELIVERIES_DAYS !== null) {
    await purgeBatch(d1, { table: "webhook_deliveries", prefix: "dlv", before: daysAgo(now, r.RETENTION_WEBHOOK_DELIVERIES_DAYS), where: "status <> 'pending'" });
  }
  if (r.RETENTION_EVENTS_DAYS !== null) {
    await purgeBatch(d1, {
      table: "events",
      prefix: "evt",
      before: daysAgo(now, r.RETENTION_EVENTS_DAYS),
      where: "NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = events.id AND d.status = 'pending')",
    });
  }
  });
}
