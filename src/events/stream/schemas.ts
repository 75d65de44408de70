import { z } from "@hono/zod-openapi";

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
  after: z
    .string()
    .regex(/^evt_[0-9a-z]{21}$/, "must be an event id (evt_…)")
    .optional()
    .openapi({ description: "Resume: first replay this account's events after this event id (within retention, at most 500; then close code 4001 — reconnect with the last id)." }),
});
