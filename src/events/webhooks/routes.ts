import { createRoute } from "@hono/zod-openapi";
import { idempotency } from "../../platform/idempotency.ts";
import { AUTHED_ERRORS, errorResponses, jsonBody, jsonResponse } from "../../platform/openapi.ts";
import { pageOf, PaginationQuery } from "../../platform/pagination.ts";
import { CreateWebhookBody, Delivery, DeliveryParams, DeliveryStatus, TestResult, UpdateWebhookBody, Webhook, WebhookIdParam, WebhookWithSecret } from "./schemas.ts";

const tags = ["Webhooks"];

export const createWebhookRoute = createRoute({
  method: "post",
  path: "/api/webhooks",
  tags,
  summary: "Register a webhook endpoint",
  description:
    "Deliveries are signed per Standard Webhooks (`webhook-id`, `webhook-timestamp`, `webhook-signature`). The `secret` is in this response only. URLs must be `https` on a public host (loopback is allowed only under `npm run dev`). Accepts `Idempotency-Key`.",
  middleware: [idempotency()] as const,
  request: { body: jsonBody(CreateWebhookBody) },
  responses: { 201: jsonResponse(WebhookWithSecret, "The webhook, with its signing secret"), ...errorResponses(...AUTHED_ERRORS, 409, 413, 415, 422) },
});

export const listWebhooksRoute = createRoute({
  method: "get",
  path: "/api/webhooks",
  tags,
  summary: "List webhooks (newest first; secrets are never shown again)",
  request: { query: PaginationQuery },
  responses: { 200: jsonResponse(pageOf(Webhook, "WebhookPage"), "A page of webhooks"), ...errorResponses(...AUTHED_ERRORS) },
});

export const getWebhookRoute = createRoute({
  method: "get",
  path: "/api/webhooks/{id}",
  tags,
  summary: "Get a webhook",
  request: { params: WebhookIdParam },
  responses: { 200: jsonResponse(Webhook, "The webhook"), ...errorResponses(...AUTHED_ERRORS, 404) },
});

export const updateWebhookRoute = createRoute({
  method: "put",
  path: "/api/webhooks/{id}",
  tags,
  summary: "Change a webhook, or rotate its secret",
  description:
    "Only the fields given change. `rotateSecret: true` answers the new `secret` (once); during the grace period (`WEBHOOK_SECRET_GRACE_HOURS`, default 24) deliveries carry a signature with each secret.",
  request: { params: WebhookIdParam, body: jsonBody(UpdateWebhookBody) },
  responses: { 200: jsonResponse(WebhookWithSecret.partial({ secret: true }), "The webhook (with `secret` after a rotation)"), ...errorResponses(...AUTHED_ERRORS, 404, 413, 415) },
});

export const deleteWebhookRoute = createRoute({
  method: "delete",
  path: "/api/webhooks/{id}",
  tags,
  summary: "Delete a webhook and its delivery log",
  request: { params: WebhookIdParam },
  responses: { 204: { description: "Deleted" }, ...errorResponses(...AUTHED_ERRORS, 404) },
});

export const testWebhookRoute = createRoute({
  method: "post",
  path: "/api/webhooks/{id}/test",
  tags,
  summary: "Send a signed `webhook.test` delivery now and answer the receiver's status",
  description: "Works on disabled webhooks too; never retried; recorded in the deliveries log. Accepts `Idempotency-Key`.",
  middleware: [idempotency()] as const,
  request: { params: WebhookIdParam },
  responses: { 200: jsonResponse(TestResult, "What the receiver answered"), ...errorResponses(...AUTHED_ERRORS, 404, 422) },
});

export const listDeliveriesRoute = createRoute({
  method: "get",
  path: "/api/webhooks/{id}/deliveries",
  tags,
  summary: "The delivery log: one entry per event sent to this webhook (newest first), with every attempt",
  request: { params: WebhookIdParam, query: PaginationQuery.extend({ status: DeliveryStatus.optional().openapi({ description: "Only deliveries in this state." }) }) },
  responses: { 200: jsonResponse(pageOf(Delivery, "WebhookDeliveryPage"), "A page of deliveries"), ...errorResponses(...AUTHED_ERRORS, 404) },
});

export const getDeliveryRoute = createRoute({
  method: "get",
  path: "/api/webhooks/{id}/deliveries/{deliveryId}",
  tags,
  summary: "One delivery with every attempt",
  request: { params: DeliveryParams },
  responses: { 200: jsonResponse(Delivery, "The delivery"), ...errorResponses(...AUTHED_ERRORS, 404) },
});

export const retryDeliveryRoute = createRoute({
  method: "post",
  path: "/api/webhooks/{id}/deliveries/{deliveryId}/retry",
  tags,
  summary: "Attempt a delivery again now (same `webhook-id`)",
  description: "Answers 202 with the delivery, `pending`; the attempt appears in the log. 409 if the webhook is disabled or an attempt is in flight.",
  middleware: [idempotency()] as const,
  request: { params: DeliveryParams },
  responses: { 202: jsonResponse(Delivery, "The delivery, queued for an attempt"), ...errorResponses(...AUTHED_ERRORS, 404, 409, 422) },
});

