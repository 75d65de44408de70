import { createRouter } from "../../platform/openapi.ts";
import * as routes from "./routes.ts";
import * as service from "./service.ts";

/** Public, unauthenticated network callbacks under /hooks/ (Meta's webhook, signed media URLs). */
export const hookRoutes = createRouter()
  .openapi(routes.verifyRoute, async (c) => c.text(await service.verifyWhatsappHook(c.env, c.req.valid("param").sessionId, c.req.query()), 200))
  .openapi(routes.eventsRoute, async (c) => c.body(await service.receiveWhatsappHook(c.env, c.req.valid("param").sessionId, c.req.raw), 200))
  .openapi(routes.mediaRoute, async (c) => service.signedMedia(c.env, c.req.valid("param").mediaId, c.req.valid("query")));
