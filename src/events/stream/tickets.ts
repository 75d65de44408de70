import { and, eq, gt, inArray, lt } from "drizzle-orm";
import { streamTickets } from "../../db/schema/index.ts";
import { resolveApiKeyId } from "../../platform/api-keys.ts";
import { randomBytes, sha256Hex, toBase64Url } from "../../platform/crypto.ts";
import { directoryDb, rememberAccountShard } from "../../platform/shards.ts";
import type { AuthContext } from "../../platform/types.ts";
import { STREAM_TICKET_TTL_MS } from "../config.ts";

/** `tkt_` and 43 base64url characters (32 random bytes): nothing else is looked up. */
const TICKET = /^tkt_[A-Za-z0-9_-]{43}$/;

export async function createTicket(env: Env, auth: AuthContext, now = Date.now()): Promise<{ ticket: string; expiresAt: string }> {
  const ticket = `tkt_${toBase64Url(randomBytes(32))}`;
  const expiresAt = now + STREAM_TICKET_TTL_MS;
  await directoryDb(env).insert(streamTickets).values({ hash: await sha256Hex(ticket), accountId: auth.accountId, keyId: auth.keyId, expiresAt, createdAt: now });
  return { ticket, expiresAt: new Date(expiresAt).toISOString() };
}

/**
 * Uses a ticket up: deletes its row (so a second use finds nothing) if it has not expired, and
 * returns the caller it was issued to, or null (unknown, used, expired, or its key revoked since).
 */
export async function redeemTicket(env: Env, ticket: string, now = Date.now()): Promise<AuthContext | null> {
  if (!TICKET.test(ticket)) return null;
  const db = directoryDb(env);
  const hash = await sha256Hex(ticket);
  const [row] = await db.delete(streamTickets).where(and(eq(streamTickets.hash, hash), gt(streamTickets.expiresAt, now))).returning();
  if (!row) return null;
  const auth = await resolveApiKeyId(db, row.keyId);
  if (!auth || auth.accountId !== row.accountId) return null;
  rememberAccountShard(auth.accountId, auth.shard);
  return auth;
}

/** Cron: expired tickets nobody used, a bounded batch per tick. */
export async function purgeExpiredTickets(env: Env, now: number): Promise<void> {
  const db = directoryDb(env);
  const stale = db.select({ hash: streamTickets.hash }).from(streamTickets).where(lt(streamTickets.expiresAt, now)).limit(500);
  await db.delete(streamTickets).where(inArray(streamTickets.hash, stale));
}
