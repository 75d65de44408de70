import { createRouter } from "../platform/openapi.ts";
import type { DomainEvent } from "./types.ts";

/** /api/webhooks routes (issue 6). */
export const webhookRoutes = createRouter();

/** Events queue: fan-out to matching webhooks (issue 6). */
export async function handleEventsQueue(batch: MessageBatch<DomainEvent>, _env: Env, _ctx: ExecutionContext): Promise<void> {
  batch.ackAll();
}

/** Delivery queue: signed delivery attempts (issue 6). */
export async function handleDeliveryQueue(batch: MessageBatch<unknown>, _env: Env, _ctx: ExecutionContext): Promise<void> {
  batch.ackAll();
}

/** Every minute: re-enqueue webhook retries that are due (issue 6). */
export async function onCronEvents(_env: Env, _now: number): Promise<void> {}
