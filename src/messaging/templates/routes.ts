import { AUTHED_ERRORS, jsonBody, jsonResponse, routeGroup } from "../../platform/openapi.ts";
import { SessionIdParam } from "../sessions/schemas.ts";
import { CreateTemplateBody, DeleteTemplateQuery, Template, TemplateList, TemplateListQuery, TemplateNameParam, TemplatesDeleted } from "./schemas.ts";

const route = routeGroup({ tags: ["Templates"], errors: AUTHED_ERRORS });

export const listTemplatesRoute = route("get", "/api/sessions/{id}/templates", "List the session's message templates (synced from the network)", {
  description: "From the cache; `?refresh=1` syncs from the network first (WhatsApp: the business account's templates, every page), as does a first call with none cached.",
  request: { params: SessionIdParam, query: TemplateListQuery },
  responses: { 200: jsonResponse(TemplateList, "The session's templates, by name and language") },
  errors: [404, 409, 422, 503],
});

export const createTemplateRoute = route("post", "/api/sessions/{id}/templates", "Create a message template (checked against the network's rules, then submitted for review)", {
  description: "Answers 201 with the template, usually `PENDING`; `template.updated` follows when the network reviews it (sandbox: `APPROVED` after `SANDBOX_TEMPLATE_APPROVAL_MS`).",
  request: { params: SessionIdParam, body: jsonBody(CreateTemplateBody) },
  responses: { 201: jsonResponse(Template, "The created template") },
  errors: [404, 409, 413, 415, 422, 503],
});

export const deleteTemplateRoute = route("delete", "/api/sessions/{id}/templates/{name}", "Delete a message template (every language, or one with `language` or `hsmId`)", {
  request: { params: TemplateNameParam, query: DeleteTemplateQuery },
  responses: { 200: jsonResponse(TemplatesDeleted, "How many were deleted") },
  errors: [404, 409, 422, 503],
});
