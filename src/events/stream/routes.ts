import { AUTHED_ERRORS, jsonResponse, routeGroup } from "../../platform/openapi.ts";
import { StreamQuery, StreamTicket } from "./schemas.ts";

const route = routeGroup({ tags: ["Events"], errors: AUTHED_ERRORS });

export const createTicketRoute = route("post", "/api/events/stream/tickets", "Get a single-use ticket to open the event stream from a browser", {
  description: "Browsers cannot set `Authorization` on a WebSocket: present this ticket as `?ticket=` instead (once, within 60 s). Only its hash is stored.",
  responses: { 201: jsonResponse(StreamTicket, "The ticket") },
});

export const streamRoute = route("get", "/api/events/stream", "Live events over WebSocket", {
  description:
    "Upgrades to a WebSocket that carries this account's events as text frames, each the webhook envelope `{id, type, timestamp, data}`. Authenticate with `?ticket=` (browsers) or `Authorization: Bearer`. Best effort: at most once while connected, plus `?after=` replay from the event log on reconnect; webhooks remain the at-least-once channel. Counts once against the rate limit, at connect.",
  request: { query: StreamQuery }, responses: { 101: { description: "Switching Protocols: the WebSocket" } },
});
