import type { Router } from "../../platform/openapi.ts";
import { getBatchRoute, historyRoute, mediaRoute, sendBulkRoute, sendMediaRoute, sendRoute } from "./routes.ts";
import { chatHistory, getBatch, mediaUrl, queueMessages, sendMessage, type SendInput } from "./service.ts";

export function mountMessages(app: Router): void {
  app.openapi(sendRoute, async (c) => {
    const origin = new URL(c.req.url).origin;
    return c.json(await sendMessage(c.env, c.get("auth").accountId, c.req.valid("json") as SendInput, { origin }), 201);
  });
  app.openapi(sendMediaRoute, async (c) => {
    const origin = new URL(c.req.url).origin;
    return c.json(await sendMessage(c.env, c.get("auth").accountId, c.req.valid("json"), { origin }), 201);
  });
  app.openapi(sendBulkRoute, async (c) => {
    const { sessionId, messages } = c.req.valid("json");
    const origin = new URL(c.req.url).origin;
    const { batchId, accepted, rejected } = await queueMessages(c.env, c.get("auth").accountId, sessionId, messages, { origin });
    return c.json({ batchId, accepted, rejected }, 202);
  });
  app.openapi(getBatchRoute, async (c) => c.json(await getBatch(c.env, c.get("auth").accountId, c.req.valid("param").id), 200));
  app.openapi(mediaRoute, async (c) => c.redirect(await mediaUrl(c.env, c.get("auth").accountId, c.req.valid("param").id, new URL(c.req.url).origin), 302));
  app.openapi(historyRoute, async (c) => c.json(await chatHistory(c.env, c.get("auth").accountId, c.req.valid("param").chatId, c.req.valid("query")), 200));
}
