import { AUTHED_ERRORS, jsonResponse, routeGroup } from "../../platform/openapi.ts";
import { EventTypeList } from "./schemas.ts";

const route = routeGroup({ tags: ["Webhooks"], errors: AUTHED_ERRORS });

export const listEventTypesRoute = route("get", "/api/event-types", "The event catalog: every event type, what it means, its payload's JSON Schema and an example", {
  description:
    "The same schemas as this OpenAPI document's `webhooks` section (one source). Subscribe to these types with `POST /api/webhooks` (`events`) or the live stream.",
  responses: { 200: jsonResponse(EventTypeList, "Every event type") },
});
