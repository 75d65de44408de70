import { createApp } from "./app.ts";
import { campaignHooks } from "./messaging/campaigns/index.ts";
import { wireCampaignHooks } from "./messaging/index.ts";
import { createQueueHandler, type QueueConsumers } from "./queues.ts";
import { handleScheduled } from "./scheduled.ts";

export { RateLimiter } from "./platform/rate-limiter.ts";
export { TexContainer } from "./compile/index.ts";
export { EventStreamDO, WebhookThrottleDO } from "./events/index.ts";

export { PortfolioDO, SessionDO } from "./messaging/index.ts";

// The Session DO tells campaigns when a session goes down, its campaign sends progress, or a scheduled
// start is due: wired here, not by importing campaigns for a side effect (the DO throws if it is not).
wireCampaignHooks(campaignHooks);

/** The Worker's handlers; tests build one with their own queue consumers. */
export function createWorker(consumers?: QueueConsumers) {
  return {
    fetch: createApp().fetch,
    queue: createQueueHandler(consumers),
    scheduled: handleScheduled,
  } satisfies ExportedHandler<Env>;
}

export default createWorker();
