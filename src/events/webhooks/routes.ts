import { idempotency } from "../../platform/idempotency.ts";
import { AUTHED_ERRORS, jsonBody, jsonResponse, routeGroup } from "../../platform/openapi.ts";
import { pageOf, PaginationQuery } from "../../platform/pagination.ts";
import { CreateWebhookBody, Delivery, DeliveryParams, DeliveryStatus, RecoverBody, RecoverResult, TestResult, UpdateWebhookBody, Webhook, WebhookIdParam, WebhookWithSecret } from "./schemas.ts";

const route = routeGroup({ tags: ["Webhooks"], errors: AUTHED_ERRORS });
const DeliveryListQuery = PaginationQuery.extend({ status: DeliveryStatus.optional().openapi({ description: "Only deliveries in this state." }) });

export const createWebhookRoute = route("post", "/api/webhooks", "Register a webhook endpoint", {
  description:
    "Deliveries are signed per Standard Webhooks (`webhook-id`, `webhook-timestamp`, `webhook-signature`). The `secret` is in this response only. URLs must be `https` on a public host (loopback is allowed only under `npm run dev`). Accepts `Idempotency-Key`.",
  middleware: [idempotency()] as const, request: { body: jsonBody(CreateWebhookBody) },
  responses: { 201: jsonResponse(WebhookWithSecret, "The webhook, with its signing secret") }, errors: [409, 413, 415, 422],
});

export const listWebhooksRoute = route("get", "/api/webhooks", "List webhooks (newest first; secrets are never shown again)", {
  request: { query: PaginationQuery }, responses: { 200: jsonResponse(pageOf(Webhook, "WebhookPage"), "A page of webhooks") },
});

export const getWebhookRoute = route("get", "/api/webhooks/{id}", "Get a webhook", { request: { params: WebhookIdParam }, responses: { 200: jsonResponse(Webhook, "The webhook") }, errors: [404] });

export const updateWebhookRoute = route("put", "/api/webhooks/{id}", "Change a webhook, or rotate its secret", {
  description:
    "Only the fields given change. `rotateSecret: true` answers the new `secret` (once); during the grace period (`WEBHOOK_SECRET_GRACE_HOURS`, default 24) deliveries carry a signature with each secret.",
  request: { params: WebhookIdParam, body: jsonBody(UpdateWebhookBody) },
  responses: { 200: jsonResponse(WebhookWithSecret.partial({ secret: true }), "The webhook (with `secret` after a rotation)") }, errors: [404, 413, 415],
});

export const deleteWebhookRoute = route("delete", "/api/webhooks/{id}", "Delete a webhook and its delivery log", { request: { params: WebhookIdParam }, responses: { 204: { description: "Deleted" } }, errors: [404] });

export const testWebhookRoute = route("post", "/api/webhooks/{id}/test", "Send a signed `webhook.test` delivery now and answer the receiver's status", {
  description: "Works on disabled webhooks too; never retried; recorded in the deliveries log. Accepts `Idempotency-Key`.",
  middleware: [idempotency()] as const, request: { params: WebhookIdParam },
  responses: { 200: jsonResponse(TestResult, "What the receiver answered") }, errors: [404, 422],
});

export const listDeliveriesRoute = route("get", "/api/webhooks/{id}/deliveries", "The delivery log: one entry per event sent to this webhook (newest first), with every attempt", {
  request: { params: WebhookIdParam, query: DeliveryListQuery },
  responses: { 200: jsonResponse(pageOf(Delivery, "WebhookDeliveryPage"), "A page of deliveries") }, errors: [404],
});

export const getDeliveryRoute = route("get", "/api/webhooks/{id}/deliveries/{deliveryId}", "One delivery with every attempt", { request: { params: DeliveryParams }, responses: { 200: jsonResponse(Delivery, "The delivery") }, errors: [404] });

export const retryDeliveryRoute = route("post", "/api/webhooks/{id}/deliveries/{deliveryId}/retry", "Attempt a delivery again now (same `webhook-id`)", {
  description: "Answers 202 with the delivery, `pending`; the attempt appears in the log. 409 if the webhook is disabled or an attempt is in flight.",
  middleware: [idempotency()] as const, request: { params: DeliveryParams },
  responses: { 202: jsonResponse(Delivery, "The delivery, queued for an attempt") }, errors: [404, 409, 422],
});

export const recoverDeliveriesRoute = route("post", "/api/webhooks/{id}/recover", "Send again every failed delivery since a time (after an outage)", {
  description:
    "Queues every `failed` delivery of this webhook (retries used up, 410, disabled endpoint) created since `since` again, oldest first, each with its original `webhook-id`. At most `limit` per call; `hasMore` says to call again. Deliveries queued by an earlier call are not queued twice while pending. A delivery that used its whole retry schedule gets one attempt. `since` must lie within the delivery log's retention (`RETENTION_WEBHOOK_DELIVERIES_DAYS`). 409 if the webhook is disabled. Accepts `Idempotency-Key`.",
  middleware: [idempotency()] as const, request: { params: WebhookIdParam, body: jsonBody(RecoverBody) },
  responses: { 202: jsonResponse(RecoverResult, "How many deliveries were queued") }, errors: [404, 409, 413, 415, 422],
});
