import { createRouter } from "../../platform/openapi.ts";
import * as routes from "./routes.ts";
import { getEvent, listEvents } from "./service.ts";

/** /api/events: what was published, and how each delivery went. */
export const eventLogRoutes = createRouter()
  .openapi(routes.listEventsRoute, async (c) => c.json(await listEvents(c.env, c.get("auth").accountId, c.req.valid("query")), 200))
  .openapi(routes.getEventRoute, async (c) => c.json(await getEvent(c.env, c.get("auth").accountId, c.req.valid("param").id), 200));
