import { createRoute, z } from "@hono/zod-openapi";
import { getDb } from "../db/client.ts";
import { accountView, createKey, listKeys, revokeKey, toKeyView } from "./accounts-service.ts";
import { idempotency } from "./idempotency.ts";
import { decodeCursor, IdCursor, pageOf, PaginationQuery, toPage } from "./pagination.ts";
import { AUTHED_ERRORS, createRouter, errorResponses, idParam, jsonBody, jsonResponse } from "./openapi.ts";
import { keyLimitFor, PLANS } from "./plans.ts";

const Account = z
  .object({
    id: z.string().openapi({ example: "acc_0mh8k2x1qa1b2c3d4e5f6" }),
    name: z.string(),
    plan: z.enum(PLANS),
    rateLimitPerMinute: z.number().int().openapi({ description: "Requests per minute per API key." }),
    createdAt: z.string().openapi({ format: "date-time" }),
  })
  .openapi("Account");

const ApiKey = z
  .object({
    id: z.string().openapi({ example: "key_0mh8k2x1qa1b2c3d4e5f6" }),
    name: z.string(),
    prefix: z.string().openapi({ description: "First characters of the key, to recognise it.", example: "tmk_Ab3dE5fG" }),
    createdAt: z.string().openapi({ format: "date-time" }),
    revokedAt: z.string().nullable().openapi({ format: "date-time" }),
  })
  .openapi("ApiKey");

const CreatedApiKey = ApiKey.extend({ key: z.string().openapi({ description: "The secret. Shown only in this response." }) }).openapi("CreatedApiKey");

const CreateKeyBody = z.strictObject({ name: z.string().trim().min(1).max(100).openapi({ example: "ci" }) }).openapi("CreateApiKey");
const KeyIdParam = idParam();

const getAccountRoute = createRoute({
  method: "get",
  path: "/api/account",
  tags: ["Account"],
  summary: "The calling key's account, plan and rate limit",
  responses: { 200: jsonResponse(Account, "The account"), ...errorResponses(...AUTHED_ERRORS) },
});

const listKeysRoute = createRoute({
  method: "get",
  path: "/api/keys",
  tags: ["Account"],
  summary: "List the account's API keys (secrets are never shown again)",
  request: { query: PaginationQuery },
  responses: { 200: jsonResponse(pageOf(ApiKey, "ApiKeyPage"), "A page of keys"), ...errorResponses(...AUTHED_ERRORS) },
});

const createKeyRoute = createRoute({
  method: "post",
  path: "/api/keys",
  tags: ["Account"],
  summary: "Create another API key for this account",
  description: "The secret is in this response only. Accepts `Idempotency-Key` (a replay answers the same 201, secret included; stored encrypted). An account holds at most 3 active keys on Free, 20 on Pro (Enterprise: configured); over that, 409 `key_limit_reached`.",
  middleware: [idempotency()] as const,
  request: { body: jsonBody(CreateKeyBody) },
  responses: { 201: jsonResponse(CreatedApiKey, "The new key, with its secret"), ...errorResponses(...AUTHED_ERRORS, 409, 413, 415, 422) },
});

const revokeKeyRoute = createRoute({
  method: "delete",
  path: "/api/keys/{id}",
  tags: ["Account"],
  summary: "Revoke an API key (stops working within 60 seconds everywhere)",
  request: { params: KeyIdParam },
  responses: { 200: jsonResponse(ApiKey, "The revoked key"), ...errorResponses(...AUTHED_ERRORS, 404) },
});

export const accountRoutes = createRouter()
  .openapi(getAccountRoute, (c) => c.json(accountView(c.get("auth")), 200))
  .openapi(listKeysRoute, async (c) => {
    const { limit, cursor } = c.req.valid("query");
    const after = decodeCursor(cursor, IdCursor);
    const rows = await listKeys(getDb(c.env.DB), c.get("auth").accountId, limit, after?.id);
    const page = toPage(rows, limit, (r) => ({ id: r.id }));
    return c.json({ data: page.data.map(toKeyView), nextCursor: page.nextCursor }, 200);
  })
  .openapi(createKeyRoute, async (c) => {
    const { name } = c.req.valid("json");
    const { accountId, plan } = c.get("auth");
    return c.json(await createKey(getDb(c.env.DB), accountId, name, keyLimitFor(plan, c.env)), 201);
  })
  .openapi(revokeKeyRoute, async (c) => c.json(await revokeKey(getDb(c.env.DB), c.get("auth").accountId, c.req.valid("param").id), 200));
