import { createRoute } from "@hono/zod-openapi";
import { MediaParam, MediaQuery, SessionParam } from "./schemas.ts";
import { errorResponses } from "../../platform/openapi.ts";


export const verifyRoute = createRoute({
  method: "get",
  path: "/hooks/whatsapp/{sessionId}",
  tags: ["Network callbacks"],
  summary: "Meta webhook verification (answers `hub.challenge` when `hub.verify_token` matches)",
  security: [],
  request: { params: SessionParam },
  responses: { 200: { description: "The challenge, as text/plain" }, ...errorResponses(403, 404, 429) },
});

export const eventsRoute = createRoute({
  method: "post",
  path: "/hooks/whatsapp/{sessionId}",
  tags: ["Network callbacks"],
  summary: "Meta webhook events (signed with `X-Hub-Signature-256`)",
  security: [],
  request: { params: SessionParam },
  responses: { 200: { description: "Processed" }, ...errorResponses(400, 401, 404, 413, 429) },
});

export const mediaRoute = createRoute({
  method: "get",
  path: "/hooks/media/{mediaId}",
  tags: ["Network callbacks"],
  summary: "Uploaded media, by a signed and expiring URL (how networks fetch base64 uploads)",
  security: [],
  request: {
    params: MediaParam,
    query: MediaQuery,
  },
  responses: { 200: { description: "The file" }, ...errorResponses(404, 429) },
});

