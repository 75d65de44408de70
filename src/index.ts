import { createApp } from "./app.ts";
import { handleQueue } from "./queues.ts";
import { handleScheduled } from "./scheduled.ts";

export { RateLimiter } from "./platform/rate-limiter.ts";
export { SessionDO } from "./messaging/index.ts";
export { TexContainer } from "./compile/index.ts";
export { EventStreamDO } from "./events/index.ts";

const app = createApp();

export default {
  fetch: app.fetch,
  queue: handleQueue,
  scheduled: handleScheduled,
} satisfies ExportedHandler<Env>;
