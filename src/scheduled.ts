import { expireAssets, onCronCompile } from "./compile/index.ts";
import { purgeExpiredJobs } from "./compile/retention.ts";
import { onCronEvents } from "./events/index.ts";
import { purgeExpiredEventRows } from "./events/retention.ts";
import { onCronCampaigns } from "./messaging/campaigns/index.ts";
import { onCronMessaging } from "./messaging/index.ts";
import { purgeExpiredMessages } from "./messaging/messages/retention.ts";
import { purgeExpiredIdempotencyKeys } from "./platform/idempotency.ts";
import { log } from "./platform/log.ts";

const TASKS: Array<[string, (env: Env, now: number) => Promise<unknown>]> = [
  ["idempotency", purgeExpiredIdempotencyKeys],
  ["compile", onCronCompile],
  ["events", onCronEvents],
  ["messaging", onCronMessaging],
  ["campaigns", onCronCampaigns],
  // Retention (README "Configuration"): each module purges its own tables, a bounded batch per tick.
  ["events.retention", purgeExpiredEventRows],
  ["compile.retention", purgeExpiredJobs],
  ["compile.assets", expireAssets],
  ["messaging.retention", purgeExpiredMessages],
];

/** The every-minute cron: each area's housekeeping, isolated so one failure does not stop the rest. */
export async function handleScheduled(controller: ScheduledController, env: Env): Promise<void> {
  const now = controller.scheduledTime;
  const results = await Promise.allSettled(TASKS.map(([, task]) => task(env, now)));
  results.forEach((r, i) => {
    if (r.status === "rejected") log.error("cron task failed", { task: TASKS[i]![0], error: String(r.reason) });
  });
}
