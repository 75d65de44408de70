import { createRouter } from "../../platform/openapi.ts";
import * as routes from "./routes.ts";
import * as service from "./service.ts";

/** /api/sessions: create, list, update, restart, delete; sandbox inbound and health simulation. */
export const sessionRoutes = createRouter()
  .openapi(routes.createSessionRoute, async (c) => c.json(await service.createSession(c.env, c.get("auth").accountId, c.req.valid("json")), 201))
  .openapi(routes.listSessionsRoute, async (c) => c.json(await service.listSessions(c.env, c.get("auth").accountId, c.req.valid("query")), 200))
  .openapi(routes.getSessionRoute, async (c) => c.json(await service.getSession(c.env, c.get("auth").accountId, c.req.valid("param").id), 200))
  .openapi(routes.updateSessionRoute, async (c) => c.json(await service.updateSession(c.env, c.get("auth").accountId, c.req.valid("param").id, c.req.valid("json")), 200))
  .openapi(routes.deleteSessionRoute, async (c) => c.json(await service.deleteSession(c.env, c.get("auth").accountId, c.req.valid("param").id), 200))
  .openapi(routes.restartSessionRoute, async (c) => c.json(await service.restartSession(c.env, c.get("auth").accountId, c.req.valid("param").id), 200))
  .openapi(routes.sandboxInboundRoute, async (c) => c.json(await service.simulateSandboxInbound(c.env, c.get("auth").accountId, c.req.valid("param").id, c.req.valid("json")), 201))
  .openapi(routes.sandboxHealthRoute, async (c) => c.json(await service.simulateSandboxHealth(c.env, c.get("auth").accountId, c.req.valid("param").id, c.req.valid("json")), 200));
