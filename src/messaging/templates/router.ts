import { createRouter } from "../../platform/openapi.ts";
import * as routes from "./routes.ts";
import * as service from "./service.ts";

/** /api/sessions/{id}/templates: list (synced), create, delete. */
export const templateRoutes = createRouter()
  .openapi(routes.listTemplatesRoute, async (c) => c.json(await service.listTemplates(c.env, c.get("auth").accountId, c.req.valid("param").id, c.req.valid("query")), 200))
  .openapi(routes.createTemplateRoute, async (c) => c.json(await service.createTemplate(c.env, c.get("auth").accountId, c.req.valid("param").id, c.req.valid("json")), 201))
  .openapi(routes.deleteTemplateRoute, async (c) => c.json(await service.deleteTemplate(c.env, c.get("auth").accountId, c.req.valid("param").id, c.req.valid("param").name, c.req.valid("query")), 200));
