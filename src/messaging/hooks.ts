import { createRoute, z } from "@hono/zod-openapi";
import { readCapped } from "../platform/body-guard.ts";
import { errors } from "../platform/errors.ts";
import { errorResponses, type Router } from "../platform/openapi.ts";
import { MEDIA_ID, verifyMediaSignature } from "./media/store.ts";
import { isSessionOnNetwork, sessionStub } from "./sessions/service.ts";

/** Meta's webhook bodies are small JSON documents; anything bigger is not from Meta. */
export const MAX_HOOK_BODY = 1024 * 1024;

const SessionParam = z.object({ sessionId: z.string().max(64).openapi({ param: { name: "sessionId", in: "path" } }) });

const verifyRoute = createRoute({
  method: "get",
  path: "/hooks/whatsapp/{sessionId}",
  tags: ["Network callbacks"],
  summary: "Meta webhook verification (answers `hub.challenge` when `hub.verify_token` matches)",
  security: [],
  request: { params: SessionParam },
  responses: { 200: { description: "The challenge, as text/plain" }, ...errorResponses(403, 404, 429) },
});

const eventsRoute = createRoute({
  method: "post",
  path: "/hooks/whatsapp/{sessionId}",
  tags: ["Network callbacks"],
  summary: "Meta webhook events (signed with `X-Hub-Signature-256`)",
  security: [],
  request: { params: SessionParam },
  responses: { 200: { description: "Processed" }, ...errorResponses(400, 401, 404, 413, 429) },
});

const mediaRoute = createRoute({
  method: "get",
  path: "/hooks/media/{mediaId}",
  tags: ["Network callbacks"],
  summary: "Uploaded media, by a signed and expiring URL (how networks fetch base64 uploads)",
  security: [],
  request: {
    params: z.object({ mediaId: z.string().max(64).openapi({ param: { name: "mediaId", in: "path" } }) }),
    query: z.object({ exp: z.string().max(16).optional(), sig: z.string().max(128).optional() }),
  },
  responses: { 200: { description: "The file" }, ...errorResponses(404, 429) },
});

export function mountHooks(app: Router): void {
  app.openapi(verifyRoute, async (c) => {
    const { sessionId } = c.req.valid("param");
    if (!(await isSessionOnNetwork(c.env, sessionId, "whatsapp"))) throw errors.notFound("session");
    const res = await sessionStub(c.env, sessionId).whatsappHook({ method: "GET", query: { ...c.req.query() }, rawBody: "", signature: null });
    if (res.status === 404) throw errors.notFound("session");
    if (res.status === 403) throw errors.forbidden("hub.verify_token does not match the session's verify token.");
    return c.text(res.body, 200);
  });

  app.openapi(eventsRoute, async (c) => {
    const { sessionId } = c.req.valid("param");
    // The session first: a post for no session costs one D1 read, no body read and no Durable Object.
    if (!(await isSessionOnNetwork(c.env, sessionId, "whatsapp"))) throw errors.notFound("session");
    if (Number(c.req.header("Content-Length") ?? 0) > MAX_HOOK_BODY) throw errors.payloadTooLarge(MAX_HOOK_BODY);
    // Counted as it streams (a chunked body declares no size): never more than the cap in memory.
    const body = c.req.raw.body;
    const bytes = body ? await readCapped(body, MAX_HOOK_BODY, () => errors.payloadTooLarge(MAX_HOOK_BODY)) : new Uint8Array(0);
    const rawBody = new TextDecoder().decode(bytes);
    const res = await sessionStub(c.env, sessionId).whatsappHook({ method: "POST", query: {}, rawBody, signature: c.req.header("X-Hub-Signature-256") ?? null });
    if (res.status === 404) throw errors.notFound("session");
    if (res.status === 401) throw errors.unauthorized("The X-Hub-Signature-256 header does not match the body.");
    if (res.status === 400) throw errors.invalidRequest("The body is not JSON.");
    return c.body(null, 200);
  });

  app.openapi(mediaRoute, async (c) => {
    const { mediaId } = c.req.valid("param");
    const { exp, sig } = c.req.valid("query");
    if (!MEDIA_ID.test(mediaId) || !(await verifyMediaSignature(c.env, mediaId, exp, sig))) throw errors.notFound("media");
    const obj = await c.env.FILES.get(`media/${mediaId}`);
    if (!obj) throw errors.notFound("media");
    const headers = new Headers();
    obj.writeHttpMetadata(headers);
    headers.set("Cache-Control", "private, max-age=300");
    headers.set("X-Content-Type-Options", "nosniff");
    return new Response(obj.body, { headers });
  });
}
