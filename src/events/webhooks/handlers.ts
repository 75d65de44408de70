import { createRouter } from "../../platform/openapi.ts";
import { decodeCursor, IdCursor, toPage } from "../../platform/pagination.ts";
import * as routes from "./routes.ts";
import * as service from "./service.ts";

/** /api/webhooks: registration, test sends, the delivery log and manual retries. */
export const webhookRoutes = createRouter()
  .openapi(routes.createWebhookRoute, async (c) => c.json(await service.createWebhook(c.env, c.get("auth").accountId, c.req.valid("json")), 201))
  .openapi(routes.listWebhooksRoute, async (c) => {
    const { limit, cursor } = c.req.valid("query");
    const after = decodeCursor(cursor, IdCursor);
    const rows = await service.listWebhooks(c.env, c.get("auth").accountId, limit, after?.id);
    const page = toPage(rows, limit, (r) => ({ id: r.id }));
    return c.json({ data: page.data.map((r) => service.toWebhookView(r)), nextCursor: page.nextCursor }, 200);
  })
  .openapi(routes.getWebhookRoute, async (c) => c.json(await service.getWebhook(c.env, c.get("auth").accountId, c.req.valid("param").id), 200))
  .openapi(routes.updateWebhookRoute, async (c) => c.json(await service.updateWebhook(c.env, c.get("auth").accountId, c.req.valid("param").id, c.req.valid("json")), 200))
  .openapi(routes.deleteWebhookRoute, async (c) => {
    await service.deleteWebhook(c.env, c.get("auth").accountId, c.req.valid("param").id);
    return c.body(null, 204);
  })
  .openapi(routes.testWebhookRoute, async (c) => c.json(await service.testWebhook(c.env, c.get("auth").accountId, c.req.valid("param").id), 200))
  .openapi(routes.listDeliveriesRoute, async (c) => {
    const { limit, cursor, status } = c.req.valid("query");
    const after = decodeCursor(cursor, IdCursor);
    const rows = await service.listDeliveries(c.env, c.get("auth").accountId, c.req.valid("param").id, { limit, before: after?.id, status });
    const page = toPage(rows, limit, (r) => ({ id: r.row.id }));
    return c.json({ data: page.data.map((r) => r.view), nextCursor: page.nextCursor }, 200);
  })
  .openapi(routes.getDeliveryRoute, async (c) => {
    const { id, deliveryId } = c.req.valid("param");
    return c.json(await service.getDelivery(c.env, c.get("auth").accountId, id, deliveryId), 200);
  })
  .openapi(routes.retryDeliveryRoute, async (c) => {
    const { id, deliveryId } = c.req.valid("param");
    return c.json(await service.retryDelivery(c.env, c.get("auth").accountId, id, deliveryId), 202);
  });
