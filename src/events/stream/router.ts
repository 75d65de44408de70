import { createRouter } from "../../platform/openapi.ts";
import * as routes from "./routes.ts";
import * as service from "./service.ts";
import { pollEvents } from "./poll.ts";
import { createTicket } from "./tickets.ts";

/** /api/events/stream: tickets and the WebSocket itself (held by the account's EventStreamDO). */
export const streamRoutes = createRouter()
  .openapi(routes.createTicketRoute, async (c) => c.json(await createTicket(c.env, c.get("auth")), 201))
  .openapi(routes.streamRoute, async (c) => (await service.openStream(c.env, c.get("auth"), c.req.header("Upgrade"), c.req.valid("query"))) as never)
  .openapi(routes.pollRoute, async (c) => (await pollEvents(c.env, c.get("auth").accountId, c.req.valid("query"), c.req.raw.signal)) as never);
