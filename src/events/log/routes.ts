import { AUTHED_ERRORS, jsonResponse, routeGroup } from "../../platform/openapi.ts";
import { pageOf } from "../../platform/pagination.ts";
import { EventIdParam, EventListQuery, LoggedEvent } from "./schemas.ts";

const route = routeGroup({ tags: ["Events"], errors: AUTHED_ERRORS });

export const listEventsRoute = route("get", "/api/events", "List published events (newest first), each with its deliveries' outcomes", {
  description:
    "Within the retention window (`RETENTION_EVENTS_DAYS`, default 30). Filters combine: `type`, `since`/`until`, `sessionId`, `delivery` (events with a delivery that `failed`, `succeeded` or is `pending`). Keyset-paged: pass `nextCursor` as `cursor` with the same filters.",
  request: { query: EventListQuery },
  responses: { 200: jsonResponse(pageOf(LoggedEvent, "EventPage"), "A page of events") },
});

export const getEventRoute = route("get", "/api/events/{id}", "One event with its deliveries' outcomes", {
  request: { params: EventIdParam },
  responses: { 200: jsonResponse(LoggedEvent, "The event") },
  errors: [404],
});
