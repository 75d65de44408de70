import type { Context } from "hono";
import { createRouter } from "../../platform/openapi.ts";
import type { AppEnv } from "../../platform/types.ts";
import * as routes from "./routes.ts";
import * as service from "./service.ts";

/** start, pause, resume and cancel: one state change on the campaign named in the path, answering the campaign. */
const stateChange =
  (change: typeof service.startCampaign) =>
  async <P extends string>(c: Context<AppEnv, P, { out: { param: { id: string } } }>) =>
    c.json(await change(c.env, c.get("auth").accountId, c.req.valid("param").id), 200);

/** /api/campaigns: create, change, start/pause/resume/cancel, recipients. */
export const campaignRoutes = createRouter()
  .openapi(routes.createCampaignRoute, async (c) => c.json(await service.createCampaign(c.env, c.get("auth").accountId, c.req.valid("json")), 201))
  .openapi(routes.listCampaignsRoute, async (c) => c.json(await service.listCampaigns(c.env, c.get("auth").accountId, c.req.valid("query")), 200))
  .openapi(routes.getCampaignRoute, async (c) => c.json(await service.getCampaign(c.env, c.get("auth").accountId, c.req.valid("param").id), 200))
  .openapi(routes.updateCampaignRoute, async (c) => c.json(await service.updateCampaign(c.env, c.get("auth").accountId, c.req.valid("param").id, c.req.valid("json")), 200))
  .openapi(routes.startCampaignRoute, stateChange(service.startCampaign))
  .openapi(routes.pauseCampaignRoute, stateChange(service.pauseCampaign))
  .openapi(routes.resumeCampaignRoute, stateChange(service.resumeCampaign))
  .openapi(routes.cancelCampaignRoute, stateChange(service.cancelCampaign))
  .openapi(routes.listRecipientsRoute, async (c) => c.json(await service.listRecipients(c.env, c.get("auth").accountId, c.req.valid("param").id, c.req.valid("query")), 200));
