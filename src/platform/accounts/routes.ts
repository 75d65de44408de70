import { createRoute, type RouteConfig } from "@hono/zod-openapi";
import { idempotency } from "../idempotency.ts";
import { AUTHED_ERRORS, errorResponses, jsonBody, jsonResponse } from "../openapi.ts";
import { pageOf, PaginationQuery } from "../pagination.ts";
import { Account, ApiKey, CreatedApiKey, CreateKeyBody, KeyIdParam } from "./schemas.ts";

/** Every account route is tagged Account. */
const accountRoute = <const R extends Omit<RouteConfig, "tags">>(route: R) => createRoute({ tags: ["Account"], ...route });

export const getAccountRoute = accountRoute({
  method: "get",
  path: "/api/account",
  summary: "The calling key's account, plan and rate limit",
  responses: { 200: jsonResponse(Account, "The account"), ...errorResponses(...AUTHED_ERRORS) },
});

export const listKeysRoute = accountRoute({
  method: "get",
  path: "/api/keys",
  summary: "List the account's API keys (secrets are never shown again)",
  request: { query: PaginationQuery },
  responses: { 200: jsonResponse(pageOf(ApiKey, "ApiKeyPage"), "A page of keys"), ...errorResponses(...AUTHED_ERRORS) },
});

export const createKeyRoute = accountRoute({
  method: "post",
  path: "/api/keys",
  summary: "Create another API key for this account",
  description: "The secret is in this response only. Accepts `Idempotency-Key` (a replay answers the same 201, secret included; stored encrypted). An account holds at most 3 active keys on Free, 20 on Pro (Enterprise: configured); over that, 409 `key_limit_reached`.",
  middleware: [idempotency()] as const,
  request: { body: jsonBody(CreateKeyBody) },
  responses: { 201: jsonResponse(CreatedApiKey, "The new key, with its secret"), ...errorResponses(...AUTHED_ERRORS, 409, 413, 415, 422) },
});

export const revokeKeyRoute = accountRoute({
  method: "delete",
  path: "/api/keys/{id}",
  summary: "Revoke an API key (stops working within 60 seconds everywhere)",
  request: { params: KeyIdParam },
  responses: { 200: jsonResponse(ApiKey, "The revoked key"), ...errorResponses(...AUTHED_ERRORS, 404) },
});
