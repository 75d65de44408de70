import { createRouter } from "../../platform/openapi.ts";
import * as routes from "./routes.ts";
import * as service from "./service.ts";

/** The API's origin, for the signed URLs of uploaded media. */
const origin = (url: string) => ({ origin: new URL(url).origin });

/** /api/messages: send one (any type), send in bulk, batches, a message's file, chat history. */
export const messageRoutes = createRouter()
  .openapi(routes.sendRoute, async (c) => c.json(await service.sendMessage(c.env, c.get("auth").accountId, c.req.valid("json") as service.SendInput, origin(c.req.url)), 201))
  .openapi(routes.sendMediaRoute, async (c) => c.json(await service.sendMessage(c.env, c.get("auth").accountId, c.req.valid("json"), origin(c.req.url)), 201))
  .openapi(routes.sendBulkRoute, async (c) => c.json(await service.sendBulk(c.env, c.get("auth").accountId, c.req.valid("json"), origin(c.req.url)), 202))
  .openapi(routes.getBatchRoute, async (c) => c.json(await service.getBatch(c.env, c.get("auth").accountId, c.req.valid("param").id), 200))
  .openapi(routes.mediaRoute, async (c) => c.redirect(await service.mediaUrl(c.env, c.get("auth").accountId, c.req.valid("param").id, new URL(c.req.url).origin), 302))
  .openapi(routes.historyRoute, async (c) => c.json(await service.chatHistory(c.env, c.get("auth").accountId, c.req.valid("param").chatId, c.req.valid("query")), 200));
