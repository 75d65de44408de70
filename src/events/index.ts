/** Events and webhooks: what src/app.ts, src/queues.ts and src/scheduled.ts wire in. */
export { webhookRoutes } from "./webhooks/index.ts";
export { eventLogRoutes } from "./log/index.ts";
export { envelopeOf, eventCatalog, eventTypeRoutes, type EventCatalogEntry, type EventTypeDescriptions } from "./catalog/index.ts";
export { handleDeliveryQueue, handleEventsQueue, handleThrottledQueue } from "./consumers.ts";
export { onCronEvents } from "./cron.ts";
export { onEventsDeadLetter } from "./dead-letters.ts";
export { emit, type EmitInput } from "./emit.ts";
export { EventStreamDO, streamRoutes, streamTicketAuth, STREAM_PATH } from "./stream/index.ts";
export { WebhookThrottleDO } from "./throttle-do.ts";
