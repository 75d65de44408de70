import { z } from "@hono/zod-openapi";
import { POLL_LIMIT_DEFAULT, POLL_LIMIT_MAX, POLL_WAIT_MAX_SECONDS } from "../config.ts";

const eventCursor = z.string().regex(/^evt_[0-9a-z]{21}$/, "must be an event id (evt_…)");

export const StreamTicket = z
  .object({
    ticket: z.string().openapi({ example: "tkt_3q2-7wEXAMPLEc0ffeeXz1n4yV0aZm9bQ8sL5kT2uJr", description: "Present it once, within 60 s, as `?ticket=` on `GET /api/events/stream`." }),
    expiresAt: z.string().openapi({ example: "2026-01-01T12:01:00.000Z" }),
  })
  .openapi("StreamTicket");

export const StreamQuery = z.object({
  ticket: z.string().max(100).optional().openapi({ description: "A ticket from `POST /api/events/stream/tickets` (browsers); other clients may send `Authorization: Bearer` instead." }),
  types: z.string().max(1000).optional().openapi({ description: "Comma-separated event types to receive (default: all).", example: "message.received,message.read" }),
  sessionId: z.string().trim().min(1).max(64).optional().openapi({ description: "Only events of this messaging session." }),
  after: eventCursor
    .optional()
    .openapi({ description: "Resume: first replay this account's events after this event id (within retention, at most 500; then close code 4001 — reconnect with the last id)." }),
});

export const PollQuery = z.object({
  after: eventCursor.optional().openapi({ description: "The cursor: `next` of the previous answer, or the id of the last event received (here or on the stream). Without it: from now.", example: "evt_0mh8k2x1qa1b2c3d4e5f6" }),
  types: StreamQuery.shape.types,
  sessionId: StreamQuery.shape.sessionId,
  limit: z.coerce.number().int().min(1).max(POLL_LIMIT_MAX).default(POLL_LIMIT_DEFAULT).openapi({ description: `Events per answer (1-${POLL_LIMIT_MAX}; fewer if their bodies pass 4 MiB).` }),
  wait: z.coerce.number().int().min(0).max(POLL_WAIT_MAX_SECONDS).default(0).openapi({ description: `Long poll: with no event to answer, hold the request up to this many seconds (0-${POLL_WAIT_MAX_SECONDS}) for one to come.`, example: 20 }),
});

export const StreamFrame = z
  .object({
    id: z.string().openapi({ description: "The event id: the `webhook-id` of its deliveries, and a cursor.", example: "evt_0mh8k2x1qa1b2c3d4e5f6" }),
    type: z.string().openapi({ example: "message.received" }),
    timestamp: z.string().openapi({ format: "date-time" }),
    data: z.record(z.string(), z.unknown()).openapi({ description: "As in the webhook delivery body (see `GET /api/event-types`)." }),
  })
  .openapi("StreamFrame");

export const PollPage = z
  .object({
    data: z.array(StreamFrame).openapi({ description: "Events after the cursor, oldest first." }),
    next: z.string().openapi({ description: "Pass as `after` next time (the last event's id; the cursor given, when there was none)." }),
    hasMore: z.boolean().openapi({ description: "More events are ready: poll again at once." }),
  })
  .openapi("EventPollPage");
