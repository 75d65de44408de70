import { idempotency } from "../../platform/idempotency.ts";
import { AUTHED_ERRORS, jsonBody, jsonResponse, routeGroup } from "../../platform/openapi.ts";
import { pageOf } from "../../platform/pagination.ts";
import { Campaign, CampaignIdParam, CampaignListQuery, CreateCampaignBody, Recipient, RecipientListQuery, UpdateCampaignBody } from "./schemas.ts";

const route = routeGroup({ tags: ["Campaigns"], errors: AUTHED_ERRORS });

export const createCampaignRoute = route("post", "/api/campaigns", "Create a campaign (in draft)", {
  description: "Unknown `{{variables}}` in the text are a 400 naming the variable. Start it with `POST /api/campaigns/{id}/start`.",
  middleware: [idempotency()] as const, request: { body: jsonBody(CreateCampaignBody) },
  responses: { 201: jsonResponse(Campaign, "The campaign, in draft") }, errors: [413, 415, 422],
});

export const listCampaignsRoute = route("get", "/api/campaigns", "List campaigns, newest first; filter by status", {
  request: { query: CampaignListQuery }, responses: { 200: jsonResponse(pageOf(Campaign, "CampaignPage"), "A page of campaigns") },
});

export const getCampaignRoute = route("get", "/api/campaigns/{id}", "Get a campaign with live stats and timing", {
  request: { params: CampaignIdParam }, responses: { 200: jsonResponse(Campaign, "The campaign") }, errors: [404],
});

export const updateCampaignRoute = route("put", "/api/campaigns/{id}", "Change a draft campaign (the given fields)", {
  request: { params: CampaignIdParam, body: jsonBody(UpdateCampaignBody) },
  responses: { 200: jsonResponse(Campaign, "The updated campaign") }, errors: [404, 409, 413, 415],
});

/** A state change: POST /api/campaigns/{id}/<name>, answering the campaign. */
const action = (name: "start" | "pause" | "resume" | "cancel", summary: string, description: string) =>
  route("post", `/api/campaigns/{id}/${name}`, summary, { description, request: { params: CampaignIdParam }, responses: { 200: jsonResponse(Campaign, "The campaign") }, errors: [404, 409] });

export const startCampaignRoute = action(
  "start",
  "Start (or schedule) a campaign",
  "draft -> scheduled when `scheduledAt` is in the future, else -> running (the audience is resolved now); a scheduled campaign starts early. Idempotent when running. 409 `invalid_campaign_state` from another state, 409 `session_not_working`.",
);
export const pauseCampaignRoute = action("pause", "Pause a running campaign", "Nothing more is sent within a second. Idempotent when paused.");
export const resumeCampaignRoute = action("resume", "Resume a paused campaign", "Continues where it stopped; 409 `session_not_working` while the session is not WORKING.");
export const cancelCampaignRoute = action("cancel", "Cancel a campaign", "From any state before completed; recipients not yet sent become `skipped: cancelled`.");

export const listRecipientsRoute = route("get", "/api/campaigns/{id}/recipients", "The campaign's recipients in send order, with status and failure reason", {
  request: { params: CampaignIdParam, query: RecipientListQuery },
  responses: { 200: jsonResponse(pageOf(Recipient, "CampaignRecipientPage"), "A page of recipients") }, errors: [404],
});
