import { createRouter } from "../../platform/openapi.ts";
import * as routes from "./routes.ts";
import * as service from "./service.ts";

/** /api/campaigns: create, change, start/pause/resume/cancel, recipients. */
export const campaignRoutes = createRouter()
  .openapi(routes.createCampaignRoute, async (c) => c.json(await service.createCampaign(c.env, c.get("auth").accountId, c.req.valid("json")), 201))
  .openapi(routes.listCampaignsRoute, async (c) => c.json(await service.listCampaigns(c.env, c.get("auth").accountId, c.req.valid("query")), 200))
  .openapi(routes.getCampaignRoute, async (c) => c.json(await service.getCampaign(c.env, c.get("auth").accountId, c.req.valid("param").id), 200))
  .openapi(routes.updateCampaignRoute, async (c) => c.json(await service.updateCampaign(c.env, c.get("auth").accountId, c.req.valid("param").id, c.req.valid("json")), 200))
  .openapi(routes.startCampaignRoute, async (c) => c.json(await service.startCampaign(c.env, c.get("auth").accountId, c.req.valid("param").id), 200))
  .openapi(routes.pauseCampaignRoute, async (c) => c.json(await service.pauseCampaign(c.env, c.get("auth").accountId, c.req.valid("param").id), 200))
  .openapi(routes.resumeCampaignRoute, async (c) => c.json(await service.resumeCampaign(c.env, c.get("auth").accountId, c.req.valid("param").id), 200))
  .openapi(routes.cancelCampaignRoute, async (c) => c.json(await service.cancelCampaign(c.env, c.get("auth").accountId, c.req.valid("param").id), 200))
  .openapi(routes.listRecipientsRoute, async (c) => c.json(await service.listRecipients(c.env, c.get("auth").accountId, c.req.valid("param").id, c.req.valid("query")), 200));
