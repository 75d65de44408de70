import type { Router } from "../../platform/openapi.ts";
import {
  cancelCampaignRoute,
  createCampaignRoute,
  getCampaignRoute,
  listCampaignsRoute,
  listRecipientsRoute,
  pauseCampaignRoute,
  resumeCampaignRoute,
  startCampaignRoute,
  updateCampaignRoute,
} from "./routes.ts";
import { cancelCampaign, createCampaign, getCampaign, listCampaigns, listRecipients, pauseCampaign, resumeCampaign, startCampaign, updateCampaign } from "./service.ts";

export function mountCampaigns(app: Router): void {
  app.openapi(createCampaignRoute, async (c) => c.json(await createCampaign(c.env, c.get("auth").accountId, c.req.valid("json")), 201));
  app.openapi(listCampaignsRoute, async (c) => c.json(await listCampaigns(c.env, c.get("auth").accountId, c.req.valid("query")), 200));
  app.openapi(getCampaignRoute, async (c) => c.json(await getCampaign(c.env, c.get("auth").accountId, c.req.valid("param").id), 200));
  app.openapi(updateCampaignRoute, async (c) => c.json(await updateCampaign(c.env, c.get("auth").accountId, c.req.valid("param").id, c.req.valid("json")), 200));
  app.openapi(startCampaignRoute, async (c) => c.json(await startCampaign(c.env, c.get("auth").accountId, c.req.valid("param").id), 200));
  app.openapi(pauseCampaignRoute, async (c) => c.json(await pauseCampaign(c.env, c.get("auth").accountId, c.req.valid("param").id), 200));
  app.openapi(resumeCampaignRoute, async (c) => c.json(await resumeCampaign(c.env, c.get("auth").accountId, c.req.valid("param").id), 200));
  app.openapi(cancelCampaignRoute, async (c) => c.json(await cancelCampaign(c.env, c.get("auth").accountId, c.req.valid("param").id), 200));
  app.openapi(listRecipientsRoute, async (c) => c.json(await listRecipients(c.env, c.get("auth").accountId, c.req.valid("param").id, c.req.valid("query")), 200));
}
