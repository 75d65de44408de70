import { createRoute } from "@hono/zod-openapi";
import { AUTHED_ERRORS, errorResponses, jsonResponse } from "../../platform/openapi.ts";
import { StreamQuery, StreamTicket } from "./schemas.ts";

const tags = ["Events"];

export const createTicketRoute = createRoute({
  method: "post",
  path: "/api/events/stream/tickets",
  tags,
  summary: "Get a single-use ticket to open the event stream from a browser",
  description: "Browsers cannot set `Authorization` on a WebSocket: present this ticket as `?ticket=` instead (once, within 60 s). Only its hash is stored.",
  responses: { 201: jsonResponse(StreamTicket, "The ticket"), ...errorResponses(...AUTHED_ERRORS) },
});

export const streamRoute = createRoute({
  method: "get",
  path: "/api/events/stream",
  tags,
  summary: "Live events over WebSocket",
  description:
    "Upgrades to a WebSocket that carries this account's events as text frames, each the webhook envelope `{id, type, timestamp, data}`. Authenticate with `?ticket=` (browsers) or `Authorization: Bearer`. Best effort: at most once while connected, plus `?after=` replay from the event log on reconnect; webhooks remain the at-least-once channel. Counts once against the rate limit, at connect.",
  request: { query: StreamQuery },
  responses: { 101: { description: "Switching Protocols: the WebSocket" }, ...errorResponses(...AUTHED_ERRORS) },
});
