import { z } from "@hono/zod-openapi";
import { idParam } from "../../platform/openapi.ts";
import { EVENT_TYPES, TEST_EVENT_TYPE } from "../types.ts";
import { DeliveryStatus } from "../webhooks/schemas.ts";

/** Events per page: each carries its whole body (up to 256 KiB), so pages stay smaller than other lists'. */
export const EVENTS_MAX_LIMIT = 50;
const instant = (what: string) => z.iso.datetime({ offset: true }).optional().openapi({ description: what, example: "2026-11-01T09:00:00Z" });

export const EventListQuery = z.object({
  limit: z.coerce.number().int().min(1).max(EVENTS_MAX_LIMIT).default(20).openapi({ description: `Events per page (1-${EVENTS_MAX_LIMIT}).`, example: 20 }),
  cursor: z.string().max(512).optional().openapi({ description: "`nextCursor` of the previous page." }),
  type: z.enum([...EVENT_TYPES, TEST_EVENT_TYPE]).optional().openapi({ description: "Only events of this type." }),
  since: instant("Only events created at or after this instant; default and earliest: the start of the retention window (`RETENTION_EVENTS_DAYS`)."),
  until: instant("Only events created before this instant."),
  sessionId: z.string().min(1).max(64).optional().openapi({ description: "Only events of this messaging session." }),
  delivery: DeliveryStatus.optional().openapi({ description: "Only events with at least one webhook delivery in this state." }),
});

export const EventDelivery = z
  .object({
    id: z.string(),
    webhookId: z.string(),
    status: DeliveryStatus,
    attemptCount: z.number().int(),
    lastStatusCode: z.number().int().nullable(),
    nextAttemptAt: z.string().nullable().openapi({ format: "date-time" }),
    updatedAt: z.string().openapi({ format: "date-time" }),
  })
  .openapi("EventDelivery");

export const LoggedEvent = z
  .object({
    id: z.string().openapi({ description: "Also the `webhook-id` of its deliveries.", example: "evt_0mh8k2x1qa1b2c3d4e5f6" }),
    type: z.string(),
    sessionId: z.string().nullable(),
    createdAt: z.string().openapi({ format: "date-time" }),
    payload: z.object({ type: z.string(), timestamp: z.string(), data: z.record(z.string(), z.unknown()) }).openapi({ description: "The delivery body, as signed and sent." }),
    deliveries: z.array(EventDelivery).openapi({ description: "One per webhook the event was routed to, with its outcome so far." }),
  })
  .openapi("Event");

export const EventIdParam = idParam("evt_0mh8k2x1qa1b2c3d4e5f6");

export type EventListInput = z.infer<typeof EventListQuery>;
export type LoggedEventView = z.infer<typeof LoggedEvent>;
export type EventDeliveryView = z.infer<typeof EventDelivery>;
