import { routeGroup } from "../../platform/openapi.ts";
import { MediaParam, MediaQuery, SessionParam } from "./schemas.ts";

/** Called by networks, not API clients: no API key, so none of the authenticated routes' errors. */
const route = routeGroup({ tags: ["Network callbacks"], errors: [], security: [] });

export const verifyRoute = route("get", "/hooks/whatsapp/{sessionId}", "Meta webhook verification (answers `hub.challenge` when `hub.verify_token` matches)", {
  request: { params: SessionParam }, responses: { 200: { description: "The challenge, as text/plain" } }, errors: [403, 404, 429],
});

export const eventsRoute = route("post", "/hooks/whatsapp/{sessionId}", "Meta webhook events (signed with `X-Hub-Signature-256`)", {
  request: { params: SessionParam }, responses: { 200: { description: "Processed" } }, errors: [400, 401, 404, 413, 429],
});

export const mediaRoute = route("get", "/hooks/media/{mediaId}", "Uploaded media, by a signed and expiring URL (how networks fetch base64 uploads)", {
  request: { params: MediaParam, query: MediaQuery }, responses: { 200: { description: "The file" } }, errors: [404, 429],
});
