import { idempotency } from "../idempotency.ts";
import { AUTHED_ERRORS, jsonBody, jsonResponse, routeGroup } from "../openapi.ts";
import { pageOf, PaginationQuery } from "../pagination.ts";
import { Account, ApiKey, CreatedApiKey, CreateKeyBody, KeyIdParam } from "./schemas.ts";

const route = routeGroup({ tags: ["Account"], errors: AUTHED_ERRORS });

export const getAccountRoute = route("get", "/api/account", "The calling key's account, plan and rate limit", { responses: { 200: jsonResponse(Account, "The account") } });

export const listKeysRoute = route("get", "/api/keys", "List the account's API keys (secrets are never shown again)", {
  request: { query: PaginationQuery }, responses: { 200: jsonResponse(pageOf(ApiKey, "ApiKeyPage"), "A page of keys") },
});

export const createKeyRoute = route("post", "/api/keys", "Create another API key for this account", {
  description:
    "The secret is in this response only. Accepts `Idempotency-Key` (a replay answers the same 201, secret included; stored encrypted). An account holds at most 3 active keys on Free, 20 on Pro (Enterprise: configured); over that, 409 `key_limit_reached`.",
  middleware: [idempotency()] as const, request: { body: jsonBody(CreateKeyBody) },
  responses: { 201: jsonResponse(CreatedApiKey, "The new key, with its secret") }, errors: [409, 413, 415, 422],
});

export const revokeKeyRoute = route("delete", "/api/keys/{id}", "Revoke an API key (stops working within 60 seconds everywhere)", {
  request: { params: KeyIdParam }, responses: { 200: jsonResponse(ApiKey, "The revoked key") }, errors: [404],
});
