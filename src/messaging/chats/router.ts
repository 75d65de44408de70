import { createRouter } from "../../platform/openapi.ts";
import { listChatsRoute, markReadRoute } from "./routes.ts";
import { listChats, markChatRead } from "./service.ts";

/** /api/chats */
export const chatRoutes = createRouter()
  .openapi(listChatsRoute, async (c) => c.json(await listChats(c.env, c.get("auth").accountId, c.req.valid("query")), 200))
  .openapi(markReadRoute, async (c) => c.json(await markChatRead(c.env, c.get("auth").accountId, c.req.valid("param").chatId, c.req.valid("json").sessionId), 200));
