import { AUTHED_ERRORS, jsonResponse, routeGroup } from "../../platform/openapi.ts";
import { PollPage, PollQuery, StreamQuery, StreamTicket } from "./schemas.ts";

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

export const pollRoute = route("get", "/api/events/poll", "Events after a cursor, over HTTP (long poll optional)", {
  description:
    "The event stream for receivers that must pull: this account's events after `after` (the stream's cursor: an event id), oldest first, each the stream's frame `{id, type, timestamp, data}`, and `next` to pass next time. Filters as on the stream. Only events at least 3 s old are answered, so a cursor never passes an event still being recorded. `wait` holds an empty answer up to 25 s for an event to come. Counts once against the rate limit.",
  request: { query: PollQuery },
  responses: { 200: jsonResponse(PollPage, "Events after the cursor") },
});
