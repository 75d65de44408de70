import type { MiddlewareHandler } from "hono";
import { errors } from "../../platform/errors.ts";
import type { AppEnv } from "../../platform/types.ts";
import { MAX_STREAMS_PER_ACCOUNT } from "../config.ts";
import { EVENT_TYPES } from "../types.ts";
import { STREAM_HEADER, type StreamOpen } from "./stream-do.ts";
import { createTicket, redeemTicket } from "./tickets.ts";

export const STREAM_PATH = "/api/events/stream";

/**
 * Authenticates `GET /api/events/stream?ticket=` before the API's key auth runs (which then finds
 * the caller already set): the ticket is used up here, whatever happens next. A refused ticket is
 * answered by requireAuth, after the per-IP rate limit has counted it (ticket guessing is limited).
 */
export function streamTicketAuth(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const ticket = c.req.query("ticket");
    if (c.req.method === "GET" && ticket !== undefined && !c.req.header("Authorization")) {
      const auth = await redeemTicket(c.env, ticket);
      if (auth) c.set("auth", auth);
      else c.set("authFailure", "This stream ticket is not valid: it is unknown, already used or expired (tickets last 60 s).");
    }
    await next();
  };
}

export function parseTypes(raw: string | undefined): string[] | null {
  if (raw === undefined || raw === "") return null;
  const types = [...new Set(raw.split(","))];
  const known = new Set<string>(EVENT_TYPES);
  const bad = types.filter((t) => !known.has(t));
  if (bad.length) throw errors.invalidRequest("Unknown event type in `types`.", bad.slice(0, 5).map((t) => ({ path: "types", message: `unknown event type: ${t.slice(0, 40)}` })));
  return types;
}

/** Opens the account's live event WebSocket, held by its EventStreamDO: answers the 101 with the socket. */
export async function openStream(env: Env, auth: { accountId: string; keyId: string }, upgrade: string | undefined, q: { types?: string; sessionId?: string; after?: string }): Promise<Response> {
  if (upgrade?.toLowerCase() !== "websocket") throw errors.invalidRequest("Open this URL as a WebSocket (`Upgrade: websocket`).");
  const { accountId, keyId } = auth;
  const open: StreamOpen = { accountId, keyId, types: parseTypes(q.types), sessionId: q.sessionId ?? null, after: q.after ?? null };
  const stub = env.EVENT_STREAMS.get(env.EVENT_STREAMS.idFromName(accountId));
  const res = await stub.fetch("https://event-stream/", { headers: { Upgrade: "websocket", [STREAM_HEADER]: JSON.stringify(open) } });
  if (res.status === 429) throw errors.tooManyStreams(MAX_STREAMS_PER_ACCOUNT);
  if (res.status !== 101 || !res.webSocket) throw errors.internal();
  // A fresh response: the rate-limit and request-id middleware add their headers to it.
  return new Response(null, { status: 101, webSocket: res.webSocket });
}
