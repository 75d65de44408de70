import { createRouter } from "../../platform/openapi.ts";
import * as routes from "./routes.ts";
import * as service from "./service.ts";
import { recoverDeliveries } from "./recover.ts";

/** /api/webhooks: registration, test sends, the delivery log, manual retries and recovery. */
export const webhookRoutes = createRouter()
  .openapi(routes.createWebhookRoute, async (c) => c.json(await service.createWebhook(c.env, c.get("auth").accountId, c.req.valid("json")), 201))
  .openapi(routes.listWebhooksRoute, async (c) => c.json(await service.listWebhooks(c.env, c.get("auth").accountId, c.req.valid("query")), 200))
  .openapi(routes.getWebhookRoute, async (c) => c.json(await service.getWebhook(c.env, c.get("auth").accountId, c.req.valid("param").id), 200))
  .openapi(routes.updateWebhookRoute, async (c) => c.json(await service.updateWebhook(c.env, c.get("auth").accountId, c.req.valid("param").id, c.req.valid("json")), 200))
  .openapi(routes.deleteWebhookRoute, async (c) => c.body(await service.deleteWebhook(c.env, c.get("auth").accountId, c.req.valid("param").id), 204))
  .openapi(routes.testWebhookRoute, async (c) => c.json(await service.testWebhook(c.env, c.get("auth").accountId, c.req.valid("param").id), 200))
  .openapi(routes.listDeliveriesRoute, async (c) => c.json(await service.listDeliveries(c.env, c.get("auth").accountId, c.req.valid("param").id, c.req.valid("query")), 200))
  .openapi(routes.getDeliveryRoute, async (c) => c.json(await service.getDelivery(c.env, c.get("auth").accountId, c.req.valid("param").id, c.req.valid("param").deliveryId), 200))
  .openapi(routes.retryDeliveryRoute, async (c) => c.json(await service.retryDelivery(c.env, c.get("auth").accountId, c.req.valid("param").id, c.req.valid("param").deliveryId), 202))
  .openapi(routes.recoverDeliveriesRoute, async (c) => c.json(await recoverDeliveries(c.env, c.get("auth").accountId, c.req.valid("param").id, c.req.valid("json")), 202));
