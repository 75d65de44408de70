import { readCapped } from "../../platform/body-guard.ts";
import { errors } from "../../platform/errors.ts";
import { MEDIA_ID, servedHeaders, verifyMediaSignature } from "../media/store.ts";
import { isSessionOnNetwork } from "../sessions/service.ts";
import { sessionStub } from "../sessions/session-do.ts";

/** Meta's webhook bodies are small JSON documents; anything bigger is not from Meta. */
export const MAX_HOOK_BODY = 1024 * 1024;

/** Meta's verification GET: the challenge when the verify token matches. */
export async function verifyWhatsappHook(env: Env, sessionId: string, query: Record<string, string>): Promise<string> {
  if (!(await isSessionOnNetwork(env, sessionId, "whatsapp"))) throw errors.notFound("session");
  const res = await sessionStub(env, sessionId).whatsappHook({ method: "GET", query: { ...query }, rawBody: "", signature: null });
  if (res.status === 404) throw errors.notFound("session");
  if (res.status === 403) throw errors.forbidden("hub.verify_token does not match the session's verify token.");
  return res.body;
}

/** Meta's signed event POST, handed to the session's Durable Object. */
export async function receiveWhatsappHook(env: Env, sessionId: string, req: Request): Promise<null> {
  // The session first: a post for no session costs one D1 read, no body read and no Durable Object.
  if (!(await isSessionOnNetwork(env, sessionId, "whatsapp"))) throw errors.notFound("session");
  if (Number(req.headers.get("Content-Length") ?? 0) > MAX_HOOK_BODY) throw errors.payloadTooLarge(MAX_HOOK_BODY);
  // Counted as it streams (a chunked body declares no size): never more than the cap in memory.
  const bytes = req.body ? await readCapped(req.body, MAX_HOOK_BODY, () => errors.payloadTooLarge(MAX_HOOK_BODY)) : new Uint8Array(0);
  const rawBody = new TextDecoder().decode(bytes);
  const res = await sessionStub(env, sessionId).whatsappHook({ method: "POST", query: {}, rawBody, signature: req.headers.get("X-Hub-Signature-256") });
  if (res.status === 404) throw errors.notFound("session");
  if (res.status === 401) throw errors.unauthorized("The X-Hub-Signature-256 header does not match the body.");
  if (res.status === 400) throw errors.invalidRequest("The body is not JSON.");
  return null;
}

/** A stored file (uploaded or received) by its signed, expiring URL, inert whatever its sender declared. */
export async function signedMedia(env: Env, mediaId: string, q: { exp?: string; sig?: string }): Promise<Response> {
  if (!MEDIA_ID.test(mediaId) || !(await verifyMediaSignature(env, mediaId, q.exp, q.sig))) throw errors.notFound("media");
  const obj = await env.FILES.get(`media/${mediaId}`);
  if (!obj) throw errors.notFound("media");
  const headers = new Headers(await servedHeaders(env, mediaId, obj));
  headers.set("Content-Length", String(obj.size));
  headers.set("Cache-Control", "private, max-age=300");
  return new Response(obj.body, { headers });
}
