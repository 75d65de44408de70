import { and, desc, eq, lt, ne } from "drizzle-orm";
import type { z } from "@hono/zod-openapi";
import { messagingSessions, sessionRoutes } from "../../db/schema/index.ts";
import { errors } from "../../platform/errors.ts";
import { log } from "../../platform/log.ts";
import { newId } from "../../platform/ids.ts";
import { decodeCursor, IdCursor, toPage } from "../../platform/pagination.ts";
import { ACCEPTED_ADDRESS_FORMS, parseAddress } from "../chat-id.ts";
import { config } from "../../platform/config.ts";
import { checkTargetUrl } from "../../platform/safe-url.ts";
import { storeUpload } from "../media/upload.ts";
import type { Message } from "../messages/schemas.ts";
import type { InboundBody } from "../networks/driver.ts";
import { NETWORKS } from "../network-traits.ts";
import { toSession, type SessionRow } from "./mapper.ts";
import { MESSAGING_TIERS, type CreateSessionBody, type Network, type SandboxHealthBody, type SandboxInboundBody, type Session, type UpdateSessionBody } from "./schemas.ts";
import { writeSessionHealth } from "./state.ts";
import { limitsFor, type SendLimitsInput } from "../send-limits.ts";
import { sessionStub, type SessionDO } from "./session-do.ts";
import { accountShard, directoryDb } from "../../platform/shards.ts";

/**
 * Sessions known to exist, per account, in this isolate. A session row is never deleted (a deleted
 * session is STOPPED), so a hit stays true; the Durable Object still checks ownership and state.
 */
const knownSessions = new Set<string>();
const MAX_KNOWN_SESSIONS = 10_000;

/**
 * The Durable Object of one of this account's sessions, or 404 without touching any: asking a
 * namespace for an id that has no session would create an empty object (and leave it behind).
 */
export async function ownedSessionStub(env: Env, accountId: string, sessionId: string): Promise<DurableObjectStub<SessionDO>> {
  const key = `${accountId}\n${sessionId}`;
  if (!knownSessions.has(key)) {
    const row = await (await accountShard(env, accountId)).db
      .select({ id: messagingSessions.id })
      .from(messagingSessions)
      .where(and(eq(messagingSessions.accountId, accountId), eq(messagingSessions.id, sessionId)))
      .get();
    if (!row) throw errors.notFound("session");
    if (knownSessions.size >= MAX_KNOWN_SESSIONS) knownSessions.delete(knownSessions.values().next().value!);
    knownSessions.add(key);
  }
  return sessionStub(env, sessionId);
}

/** Sessions whose buffers a read across the account's sessions commits first (an account's are far fewer). */
const MAX_SESSIONS_COMMITTED = 100;

/**
 * Read your writes: the sessions' Durable Objects commit what they buffered (session-do.ts
 * `flushWrites`) before a read of their messages. `sessionId`: that session (already checked to be
 * the account's); else every session of the account that is not STOPPED (a stopped one committed on
 * stop). A commit that fails is logged and the read goes on with what D1 has.
 */
export async function commitSessionWrites(env: Env, accountId: string, sessionId?: string): Promise<void> {
  const ids = sessionId
    ? [sessionId]
    : (
        await (await accountShard(env, accountId)).db
          .select({ id: messagingSessions.id })
          .from(messagingSessions)
          .where(and(eq(messagingSessions.accountId, accountId), ne(messagingSessions.status, "STOPPED")))
          .limit(MAX_SESSIONS_COMMITTED)
      ).map((r) => r.id);
  await Promise.all(ids.map((id) => sessionStub(env, id).flushWrites().catch((err: unknown) => log.error("session commit before a read failed", { sessionId: id, error: String(err) }))));
}

/** The session row of this account, or undefined. */
export async function findSession(env: Env, accountId: string, sessionId: string): Promise<SessionRow | undefined> {
  return (await accountShard(env, accountId)).db
    .select()
    .from(messagingSessions)
    .where(and(eq(messagingSessions.accountId, accountId), eq(messagingSessions.id, sessionId)))
    .get();
}

/**
 * Whether a session with this id exists on `network` (any account: for the network's own callbacks).
 * The directory's route names its account, so only then is the account's shard read.
 */
export async function isSessionOnNetwork(env: Env, sessionId: string, network: Network): Promise<boolean> {
  const route = await directoryDb(env).select().from(sessionRoutes).where(eq(sessionRoutes.sessionId, sessionId)).get();
  if (!route || route.network !== network) return false;
  const row = await (await accountShard(env, route.accountId)).db
    .select({ id: messagingSessions.id })
    .from(messagingSessions)
    .where(and(eq(messagingSessions.accountId, route.accountId), eq(messagingSessions.id, sessionId), eq(messagingSessions.network, network)))
    .get();
  return row !== undefined;
}

/** The session row of this account, or 404 (another account's id is the same as a missing one). */
export async function loadSession(env: Env, accountId: string, sessionId: string): Promise<SessionRow> {
  const row = await findSession(env, accountId, sessionId);
  if (!row) throw errors.notFound("session");
  return row;
}

export async function createSession(env: Env, accountId: string, input: z.infer<typeof CreateSessionBody>): Promise<Session> {
  const now = Date.now();
  const id = newId("ses");
  const network = input.network;
  const traits = NETWORKS[network];
  const phoneNumber = traits.newPhoneNumber();
  const rate = input.sendRatePerMinute !== undefined ? input.sendRatePerMinute : traits.defaultSendRate;
  // The route first: a session the directory does not know could not get its network's callbacks.
  await directoryDb(env).insert(sessionRoutes).values({ sessionId: id, accountId, network, createdAt: now });
  await (await accountShard(env, accountId)).db
    .insert(messagingSessions)
    .values({
      id,
      accountId,
      name: input.name ?? `${network} session`,
      network,
      status: "STARTING",
      statusReason: null,
      phoneNumber,
      credentialsSet: input.whatsapp !== undefined,
      sendRatePerMinute: rate,
      limits: input.limits ? JSON.stringify(input.limits) : null,
      createdAt: now,
      updatedAt: now,
    });
  await sessionStub(env, id).start({ sessionId: id, accountId, network, phoneNumber, credentials: input.whatsapp ?? null, sendRatePerMinute: rate, ...(input.limits ? { limits: input.limits } : {}), ...(input.sandbox?.businessAccountId ? { businessAccountId: input.sandbox.businessAccountId } : {}) });
  return toSession(await loadSession(env, accountId, id));
}

export async function getSession(env: Env, accountId: string, id: string): Promise<Session> {
  return toSession(await loadSession(env, accountId, id));
}

export async function listSessions(env: Env, accountId: string, q: { limit: number; cursor?: string }): Promise<{ data: Session[]; nextCursor: string | null }> {
  const cursor = decodeCursor(q.cursor, IdCursor);
  const rows = await (await accountShard(env, accountId)).db
    .select()
    .from(messagingSessions)
    .where(and(eq(messagingSessions.accountId, accountId), cursor ? lt(messagingSessions.id, cursor.id) : undefined))
    .orderBy(desc(messagingSessions.id))
    .limit(q.limit + 1);
  const page = toPage(rows, q.limit, (r) => ({ id: r.id }));
  return { data: page.data.map((r) => toSession(r)), nextCursor: page.nextCursor };
}

/** Meta's tiers in order; a number's limit is raised one step at a time (and lowered to any). */
const TIER_STEPS: readonly (number | "unlimited")[] = [...MESSAGING_TIERS, "unlimited"];

/** PATCH /api/sessions/:id: new limits from now, queued sends included; `session.updated`. */
export async function updateSession(env: Env, accountId: string, id: string, body: UpdateSessionBody): Promise<Session> {
  const row = await loadSession(env, accountId, id);
  if (row.status === "STOPPED") throw errors.conflict("session_stopped", "The session was deleted; create a new one.");
  const patch = body.limits as SendLimitsInput;
  const tier = patch.messagingLimit;
  if (row.network === "whatsapp" && tier !== undefined) {
    const to = TIER_STEPS.indexOf(tier);
    if (to < 0) throw errors.invalidRequest(`limits.messagingLimit must be one of ${MESSAGING_TIERS.join(", ")} or "unlimited" for whatsapp.`, [{ path: "limits.messagingLimit", message: "not one of Meta's tiers" }]);
    const current = limitsFor("whatsapp", row.limits ? (JSON.parse(row.limits) as SendLimitsInput) : undefined).messagingLimit ?? "unlimited";
    const from = TIER_STEPS.indexOf(current);
    if (from >= 0 && to > from + 1) {
      throw errors.unprocessable("tier_skip", `Meta raises the messaging limit one tier at a time: from ${current} the next is ${TIER_STEPS[from + 1]}.`, { details: { from: current, next: TIER_STEPS[from + 1] } });
    }
  }
  const stub = sessionStub(env, id);
  if (!(await stub.setLimits(accountId, patch))) throw errors.conflict("session_stopped", "The session was deleted; create a new one.");
  if (tier !== undefined) await tierToPortfolio(env, accountId, id, (await stub.portfolioId(accountId)) ?? null, tier);
  return toSession(await loadSession(env, accountId, id));
}

/**
 * Meta's tier is the portfolio's, so a messaging limit set on one session is set on the account's other
 * sessions of its portfolio (each checks it is in it; a session that fails is logged, the change stands).
 */
async function tierToPortfolio(env: Env, accountId: string, sessionId: string, portfolio: string | null, tier: number | "unlimited"): Promise<void> {
  if (!portfolio) return;
  const others = await (await accountShard(env, accountId)).db
    .select({ id: messagingSessions.id })
    .from(messagingSessions)
    .where(and(eq(messagingSessions.accountId, accountId), ne(messagingSessions.status, "STOPPED"), ne(messagingSessions.id, sessionId)))
    .limit(MAX_SESSIONS_COMMITTED);
  await Promise.all(others.map(({ id }) => sessionStub(env, id).portfolioTier(accountId, portfolio, tier).catch((err: unknown) => log.error("portfolio tier to a session failed", { sessionId: id, error: String(err) }))));
}

/** POST /api/sessions/:id/sandbox/health: the sandbox's stand-in for Meta's `account_update` webhook. */
export async function simulateSandboxHealth(env: Env, accountId: string, id: string, body: SandboxHealthBody): Promise<Session> {
  const row = await loadSession(env, accountId, id);
  if (row.network !== "sandbox") throw errors.notFound("sandbox session");
  const events = { ok: "ACCOUNT_UPDATE", restricted: "ACCOUNT_RESTRICTION", ban_scheduled: "DISABLED_UPDATE", banned: "DISABLED_UPDATE", violation: "ACCOUNT_VIOLATION" } as const;
  await writeSessionHealth(env, accountId, id, {
    state: body.state,
    event: events[body.state],
    ...(body.restrictions ? { restrictions: body.restrictions } : {}),
    ...(body.violation ? { violation: body.violation } : {}),
    ...(body.banDate ? { banDate: body.banDate } : {}),
    at: new Date().toISOString(),
  });
  return toSession(await loadSession(env, accountId, id));
}

export async function restartSession(env: Env, accountId: string, id: string): Promise<Session> {
  await loadSession(env, accountId, id);
  const res = await sessionStub(env, id).restart();
  if (!res.ok) throw errors.conflict(res.code, res.message);
  return toSession(await loadSession(env, accountId, id));
}

export async function deleteSession(env: Env, accountId: string, id: string): Promise<Session> {
  await loadSession(env, accountId, id);
  await sessionStub(env, id).stop();
  return toSession(await loadSession(env, accountId, id));
}

export async function simulateSandboxInbound(env: Env, accountId: string, id: string, body: SandboxInboundBody): Promise<Message> {
  const digits = parseAddress(body.from);
  if (!digits) throw errors.invalidRequest(`from must be ${ACCEPTED_ADDRESS_FORMS}.`, [{ path: "from", message: "not a valid address" }]);
  // The session's DO checks network and state itself; uploads wait until the session is known to be ours.
  const stub = await ownedSessionStub(env, accountId, id);
  let inbound: InboundBody;
  if ("text" in body) inbound = { type: "text", text: body.text };
  else if ("location" in body) inbound = { type: "location", content: { location: body.location } };
  else if ("contacts" in body) inbound = { type: "contacts", content: { contacts: body.contacts } };
  else if ("interactive" in body) inbound = { type: "interactive", content: { interactive: body.interactive } };
  else if ("button" in body) inbound = { type: "button", content: { button: body.button } };
  else if ("order" in body) inbound = { type: "order", content: { order: body.order } };
  else if ("reaction" in body) inbound = { type: "reaction", content: { reaction: { messageId: null, emoji: body.reaction.emoji } }, reactionToExternalId: body.reaction.messageId };
  else if ("unsupported" in body) inbound = { type: "unsupported", content: { unsupported: { originalType: body.unsupported.originalType, raw: body.unsupported.raw ?? null } } };
  else {
    const { type, media, caption, filename, voice, animated } = body;
    if ((type === "audio" || type === "sticker") && caption) throw errors.invalidRequest(`${type} messages cannot have a caption.`, [{ path: "caption", message: `not allowed for ${type}` }]);
    const flags = { ...(type === "audio" ? { voice: voice ?? false } : {}), ...(type === "sticker" ? { animated: animated ?? false } : {}) };
    if ("url" in media) {
      const check = checkTargetUrl(media.url, { allowLoopback: config(env).allowLoopbackUrls });
      if (!check.ok) throw errors.invalidRequest(`media.url ${check.reason}.`, [{ path: "media.url", message: check.reason }]);
      inbound = { type, media: { mimetype: null, filename: filename ?? null, caption: caption ?? null, sourceUrl: check.url.toString(), ...flags } };
    } else {
      const stored = await storeUpload(env, accountId, type, media, filename);
      inbound = { type, media: { ...stored, caption: caption ?? null, ...flags } };
    }
  }
  const res = await stub.simulateInbound(accountId, digits, inbound);
  if ("message" in res) return res.message as Message;
  if (res.code === "not_found") throw errors.notFound("sandbox session");
  throw errors.sessionNotWorking(id, res.status);
}
