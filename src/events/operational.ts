import { z } from "@hono/zod-openapi";
import type { EmitInput } from "./emit.ts";
import { OPERATIONAL_EVENT_TYPES, type EventCatalogEntry, type OperationalEventType } from "./types.ts";

/**
 * Events about the account's own endpoints: one was disabled, or a delivery gave up. They go to the
 * account's other endpoints that subscribe (never to the one they are about: fanout asks
 * `sourceWebhookOf`) and to the live stream. A delivery of one of them that gives up announces
 * nothing, so two failing endpoints cannot keep telling each other about their failures.
 */
export const isOperational = (type: string): type is OperationalEventType => (OPERATIONAL_EVENT_TYPES as readonly string[]).includes(type);

const WebhookDisabledData = z.object({
  webhookId: z.string(),
  url: z.string(),
  reason: z.enum(["gone", "failing"]).openapi({ description: "`gone`: the endpoint answered 410. `failing`: its attempts failed continuously for `WEBHOOK_DISABLE_AFTER_DAYS`." }),
  disabledAt: z.string().openapi({ format: "date-time" }),
});

const DeliveryExhaustedData = z.object({
  webhookId: z.string(),
  deliveryId: z.string(),
  eventId: z.string().openapi({ description: "The event that was not delivered (its `webhook-id`); recover it with POST /api/webhooks/{id}/recover." }),
  eventType: z.string(),
  attempts: z.number().int(),
  lastStatusCode: z.number().int().nullable(),
  lastError: z.string().nullable(),
});

export type WebhookDisabledData = z.infer<typeof WebhookDisabledData>;
export type DeliveryExhaustedData = z.infer<typeof DeliveryExhaustedData>;

export const OPERATIONAL_EVENT_ENTRIES: EventCatalogEntry[] = [
  {
    type: "webhook.disabled",
    description: "One of the account's webhook endpoints was disabled: it answered 410 Gone, or failed continuously for days. Not sent to that endpoint.",
    data: WebhookDisabledData,
    example: { webhookId: "wh_0mh8k2x1qa1b2c3d4e5f6", url: "https://example.com/hooks/whatsapp", reason: "gone", disabledAt: "2026-11-01T09:00:00.000Z" },
  },
  {
    type: "webhook.delivery_exhausted",
    description: "A delivery to one of the account's endpoints gave up (retries used up, or 410). Not sent to that endpoint; never sent about a delivery of an event of this kind.",
    data: DeliveryExhaustedData,
    example: { webhookId: "wh_0mh8k2x1qa1b2c3d4e5f6", deliveryId: "dlv_0mh8k2x1qa1b2c3d4e5f6", eventId: "evt_0mh8k2x1qa1b2c3d4e5f6", eventType: "message.read", attempts: 10, lastStatusCode: 503, lastError: null },
  },
];

export function webhookDisabledEvent(accountId: string, data: WebhookDisabledData): EmitInput {
  return { type: "webhook.disabled", accountId, sessionId: null, data };
}

export function deliveryExhaustedEvent(accountId: string, data: DeliveryExhaustedData): EmitInput {
  return { type: "webhook.delivery_exhausted", accountId, sessionId: null, data };
}

/** The endpoint an operational event is about (it must not receive it); null for other events. */
export function sourceWebhookOf(event: { type: string; payload: string }): string | null {
  if (!isOperational(event.type)) return null;
  try {
    const id = (JSON.parse(event.payload) as { data?: { webhookId?: unknown } }).data?.webhookId;
    return typeof id === "string" ? id : null;
  } catch {
    return null;
  }
}
