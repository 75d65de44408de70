import { z } from "@hono/zod-openapi";
import { idParam } from "../../platform/openapi.ts";
import { MAX_PER_SECOND, MIN_PER_SECOND } from "../throttle-do.ts";
import { EVENT_TYPES } from "../types.ts";

export const WebhookEventFilter = z.enum([...EVENT_TYPES, "*"]).openapi({ description: "An event type, or `*` for all of them." });

const url = z.string().trim().min(1).max(2048).openapi({
  description: "Where deliveries are POSTed: `https`, a public host, no credentials. Redirects are not followed.",
  example: "https://example.com/hooks/whatsapp",
});
const events = z
  .array(WebhookEventFilter)
  .min(1)
  .max(EVENT_TYPES.length + 1)
  .openapi({ description: "Event types to receive, or `[\"*\"]`.", example: ["message.received", "message.read"] });
const description = z.string().trim().max(500).nullable().openapi({ example: "Production CRM" });
const sessionId = z.string().trim().min(1).max(64).nullable().openapi({ description: "Only events of this messaging session; null = every session." });
const maxPerSecond = z.number().int().min(MIN_PER_SECOND).max(MAX_PER_SECOND).nullable().openapi({
  description: `Most delivery attempts per second to this endpoint (${MIN_PER_SECOND}-${MAX_PER_SECOND}); more wait, in order, without counting as failures. null = no limit.`,
  example: 50,
});

export const CreateWebhookBody = z
  .strictObject({ url, events, description: description.optional(), sessionId: sessionId.optional(), enabled: z.boolean().default(true), maxPerSecond: maxPerSecond.optional() })
  .openapi("CreateWebhook");

export const UpdateWebhookBody = z
  .strictObject({
    url: url.optional(),
    events: events.optional(),
    description: description.optional(),
    sessionId: sessionId.optional(),
    enabled: z.boolean().optional().openapi({ description: "Re-enabling clears `disabledReason` and the failure streak." }),
    maxPerSecond: maxPerSecond.optional().openapi({ description: "Change or (null) remove the rate; deliveries waiting for a slot take one at the new rate." }),
    rotateSecret: z.boolean().optional().openapi({ description: "Issue a new secret (returned in this response only). The old one keeps signing for the grace period." }),
  })
  .refine((b) => Object.values(b).some((v) => v !== undefined), { message: "Give at least one field to change." })
  .openapi("UpdateWebhook");

export const Webhook = z
  .object({
    id: z.string().openapi({ example: "wh_0mh8k2x1qa1b2c3d4e5f6" }),
    url: z.string(),
    events: z.array(WebhookEventFilter),
    description: z.string().nullable(),
    sessionId: z.string().nullable(),
    enabled: z.boolean(),
    maxPerSecond: z.number().int().nullable().openapi({ description: "Most delivery attempts per second; null = no limit." }),
    disabledReason: z.enum(["gone", "failing"]).nullable().openapi({ description: "Set when we disabled it: `gone` (the receiver answered 410) or `failing` (failed continuously for days)." }),
    previousSecretExpiresAt: z.string().nullable().openapi({ format: "date-time", description: "Until then deliveries are also signed with the secret replaced by the last rotation." }),
    createdAt: z.string().openapi({ format: "date-time" }),
    updatedAt: z.string().openapi({ format: "date-time" }),
  })
  .openapi("Webhook");

export const WebhookWithSecret = Webhook.extend({
  secret: z.string().openapi({ description: "Standard Webhooks signing secret. Shown only in this response.", example: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw" }),
}).openapi("WebhookWithSecret");

export const Attempt = z
  .object({
    attempt: z.number().int().openapi({ description: "1 for the first attempt." }),
    statusCode: z.number().int().nullable().openapi({ description: "The receiver's status; null on timeout or network error." }),
    durationMs: z.number().int(),
    error: z.string().nullable(),
    responseBody: z.string().nullable().openapi({ description: "First 1 KiB of the receiver's answer to a failed attempt (null for the successful one: its answer is not kept)." }),
    nextAttemptAt: z.string().nullable().openapi({ format: "date-time", description: "When the next attempt was scheduled after this one." }),
    createdAt: z.string().openapi({ format: "date-time" }),
  })
  .openapi("WebhookAttempt");

export const DeliveryStatus = z.enum(["pending", "succeeded", "failed"]);

export const Delivery = z
  .object({
    id: z.string().openapi({ example: "dlv_0mh8k2x1qa1b2c3d4e5f6" }),
    webhookId: z.string(),
    eventId: z.string().openapi({ description: "Also the `webhook-id` header: the same on every attempt." }),
    eventType: z.string(),
    status: DeliveryStatus,
    attemptCount: z.number().int(),
    nextAttemptAt: z.string().nullable().openapi({ format: "date-time" }),
    lastStatusCode: z.number().int().nullable(),
    lastError: z.string().nullable(),
    attempts: z.array(Attempt).openapi({ description: "Every failed attempt and the successful one, oldest first." }),
    createdAt: z.string().openapi({ format: "date-time" }),
    updatedAt: z.string().openapi({ format: "date-time" }),
  })
  .openapi("WebhookDelivery");

export const TestResult = z
  .object({
    success: z.boolean().openapi({ description: "The receiver answered 2xx." }),
    statusCode: z.number().int().nullable(),
    durationMs: z.number().int(),
    error: z.string().nullable(),
    deliveryId: z.string().openapi({ description: "The test delivery, also in the deliveries log." }),
    eventId: z.string(),
  })
  .openapi("WebhookTestResult");

/** Most deliveries one recover call queues: bounded work per request; the answer says when more remain. */
export const RECOVER_MAX_LIMIT = 500;

export const RecoverBody = z
  .strictObject({
    since: z.iso.datetime({ offset: true }).openapi({ description: "Recover deliveries of events created at or after this instant (ISO 8601), within the delivery log's retention.", example: "2026-11-01T09:00:00Z" }),
    limit: z.number().int().min(1).max(RECOVER_MAX_LIMIT).default(RECOVER_MAX_LIMIT).openapi({ description: `At most this many deliveries are queued by this call (1-${RECOVER_MAX_LIMIT}).` }),
  })
  .openapi("RecoverDeliveries");

export const RecoverResult = z
  .object({
    queued: z.number().int().openapi({ description: "Failed deliveries queued again by this call, oldest first." }),
    hasMore: z.boolean().openapi({ description: "More failed deliveries remain since `since`: call again (those queued now are not queued twice while pending)." }),
    since: z.string().openapi({ format: "date-time" }),
  })
  .openapi("RecoverResult");

export const WebhookIdParam = idParam();
export const DeliveryParams = WebhookIdParam.extend({ deliveryId: z.string().max(64).openapi({ param: { name: "deliveryId", in: "path" } }) });

export type CreateWebhookInput = z.infer<typeof CreateWebhookBody>;
export type UpdateWebhookInput = z.infer<typeof UpdateWebhookBody>;
export type WebhookView = z.infer<typeof Webhook>;
export type DeliveryView = z.infer<typeof Delivery>;
export type RecoverInput = z.infer<typeof RecoverBody>;
export type RecoverResult = z.infer<typeof RecoverResult>;
