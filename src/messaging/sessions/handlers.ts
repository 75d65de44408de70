import type { Router } from "../../platform/openapi.ts";
import { createSessionRoute, deleteSessionRoute, getSessionRoute, listSessionsRoute, restartSessionRoute, sandboxInboundRoute } from "./routes.ts";
import { createSession, deleteSession, getSession, listSessions, restartSession, simulateSandboxInbound } from "./service.ts";

export function mountSessions(app: Router): void {
  app.openapi(createSessionRoute, async (c) => c.json(await createSession(c.env, c.get("auth").accountId, c.req.valid("json")), 201));
  app.openapi(listSessionsRoute, async (c) => c.json(await listSessions(c.env, c.get("auth").accountId, c.req.valid("query")), 200));
  app.openapi(getSessionRoute, async (c) => c.json(await getSession(c.env, c.get("auth").accountId, c.req.valid("param").id), 200));
  app.openapi(deleteSessionRoute, async (c) => c.json(await deleteSession(c.env, c.get("auth").accountId, c.req.valid("param").id), 200));
  app.openapi(restartSessionRoute, async (c) => c.json(await restartSession(c.env, c.get("auth").accountId, c.req.valid("param").id), 200));
  app.openapi(sandboxInboundRoute, async (c) => c.json(await simulateSandboxInbound(c.env, c.get("auth").accountId, c.req.valid("param").id, c.req.valid("json")), 201));
}
