import { createRoute } from "@hono/zod-openapi";
import { idempotency } from "../idempotency.ts";
import { AUTHED_ERRORS, errorResponses, jsonBody, jsonResponse } from "../openapi.ts";
import { pageOf, PaginationQuery } from "../pagination.ts";
import { Account, ApiKey, CreatedApiKey, CreateKeyBody, KeyIdParam } from "./schemas.ts";

export const getAccountRoute = createRoute({
  method: "get",
  path: "/api/account",
  tags: ["Account"],
  summary: "The calling key's account, plan and rate limit",
  responses: { 200: jsonResponse(Account, "The account"), ...errorResponses(...AUTHED_ERRORS) },
});

export const listKeysRoute = createRoute({
  method: "get",
  path: "/api/keys",
  tags: ["Account"],
  summary: "List the account's API keys (secrets are never shown again)",
  request: { query: PaginationQuery },
  responses: { 200: jsonResponse(pageOf(ApiKey, "ApiKeyPage"), "A page of keys"), ...errorResponses(...AUTHED_ERRORS) },
});

export const createKeyRoute = createRoute({
  method: "post",
  path: "/api/keys",
  tags: ["Account"],
  summary: "Create another API key for this account",
  description: "The secret is in this response only. Accepts `Idempotency-Key` (a replay answers the same 201, secret included; stored encrypted). An account holds at most 3 active keys on Free, 20 on Pro (Enterprise: configured); over that, 409 `key_limit_reached`.",
  middleware: [idempotency()] as const,
  request: { body: jsonBody(CreateKeyBody) },
  responses: { 201: jsonResponse(CreatedApiKey, "The new key, with its secret"), ...errorResponses(...AUTHED_ERRORS, 409, 413, 415, 422) },
});

export const revokeKeyRoute = createRoute({
  method: "delete",
  path: "/api/keys/{id}",
  tags: ["Account"],
  summary: "Revoke an API key (stops working within 60 seconds everywhere)",
  request: { params: KeyIdParam },
  responses: { 200: jsonResponse(ApiKey, "The revoked key"), ...errorResponses(...AUTHED_ERRORS, 404) },
});
