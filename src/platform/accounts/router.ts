import { createRouter } from "../openapi.ts";
import * as routes from "./routes.ts";
import * as service from "./service.ts";

/** /api/account and /api/keys: the caller's account and its API keys. */
export const accountRoutes = createRouter()
  .openapi(routes.getAccountRoute, (c) => c.json(service.getAccount(c.get("auth")), 200))
  .openapi(routes.listKeysRoute, async (c) => c.json(await service.listKeys(c.env, c.get("auth").accountId, c.req.valid("query")), 200))
  .openapi(routes.createKeyRoute, async (c) => c.json(await service.createKey(c.env, c.get("auth"), c.req.valid("json").name), 201))
  .openapi(routes.revokeKeyRoute, async (c) => c.json(await service.revokeKey(c.env, c.get("auth").accountId, c.req.valid("param").id), 200));
