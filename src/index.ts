import { createApp } from "./app.ts";
import { campaignHooks } from "./messaging/campaigns/index.ts";
import { SessionDO as UnwiredSessionDO } from "./messaging/index.ts";
import { createQueueHandler, type QueueConsumers } from "./queues.ts";
import { handleScheduled } from "./scheduled.ts";

export { RateLimiter } from "./platform/rate-limiter.ts";
export { TexContainer } from "./compile/index.ts";
export { EventStreamDO } from "./events/index.ts";

/** The Session DO, wired to campaigns here so that no import side effect decides whether it can pause them. */
export class SessionDO extends UnwiredSessionDO {
  protected campaignHooks() {
    return campaignHooks;
  }
}

/** The Worker's handlers; tests build one with their own queue consumers. */
export function createWorker(consumers?: QueueConsumers) {
  return {
    fetch: createApp().fetch,
    queue: createQueueHandler(consumers),
    scheduled: handleScheduled,
  } satisfies ExportedHandler<Env>;
}

export default createWorker();
