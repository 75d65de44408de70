import { and, eq, inArray, isNull, type SQL } from "drizzle-orm";
import type { Db } from "../db/client.ts";
import { accounts, apiKeys } from "../db/schema/index.ts";
import { hashApiKey } from "./key-format.ts";
import { limitFor, type Plan } from "./plans.ts";
import type { AuthContext } from "./types.ts";
import { itemsPerStatement } from "./d1.ts";

export { generateApiKey, hashApiKey, looksLikeApiKey } from "./key-format.ts";

interface CacheEntry {
  auth: AuthContext;
  expiresAt: number;
}

/**
 * Per-isolate cache of key lookups. Entries live 30 s, so a revoked key or a plan change takes
 * effect within 60 s (docs/contracts.md §2) while most requests skip D1. Unknown keys are not
 * cached: a key created a moment ago must work at once.
 */
const cache = new Map<string, CacheEntry>();
export const AUTH_CACHE_TTL_MS = 30_000;
const CACHE_MAX = 10_000;

export async function resolveApiKey(db: Db, key: string, now = Date.now()): Promise<AuthContext | null> {
  const hash = await hashApiKey(key);
  const hit = cache.get(hash);
  if (hit && hit.expiresAt > now) return hit.auth;
  const auth = await authWhere(db, eq(apiKeys.hash, hash));
  if (!auth) {
    cache.delete(hash);
    return null;
  }
  if (cache.size >= CACHE_MAX) cache.clear();
  cache.set(hash, { auth, expiresAt: now + AUTH_CACHE_TTL_MS });
  return auth;
}

/** The caller behind an API key id, or null once the key is revoked (not cached: used once per stream ticket). */
export function resolveApiKeyId(db: Db, keyId: string): Promise<AuthContext | null> {
  return authWhere(db, eq(apiKeys.id, keyId));
}

/** The one key + account read both lookups share: null for no key or a revoked one. */
async function authWhere(db: Db, where: SQL): Promise<AuthContext | null> {
  const row = await db
    .select({ keyId: apiKeys.id, revokedAt: apiKeys.revokedAt, accountId: accounts.id, name: accounts.name, createdAt: accounts.createdAt, plan: accounts.plan, custom: accounts.rateLimitPerMinute, shard: accounts.shard })
    .from(apiKeys)
    .innerJoin(accounts, eq(accounts.id, apiKeys.accountId))
    .where(where)
    .get();
  if (!row || row.revokedAt !== null) return null;
  return { accountId: row.accountId, accountName: row.name, accountCreatedAt: row.createdAt, keyId: row.keyId, plan: row.plan as Plan, limitPerMinute: limitFor(row.plan as Plan, row.custom), shard: row.shard };
}

const KEY_IDS_PER_QUERY = itemsPerStatement(1);

/** Of these key ids, the ones revoked or gone (a caller holding something open on a key re-checks it). */
export async function revokedKeyIds(db: Db, keyIds: string[]): Promise<string[]> {
  const live = new Set<string>();
  for (let i = 0; i < keyIds.length; i += KEY_IDS_PER_QUERY) {
    const rows = await db.select({ id: apiKeys.id }).from(apiKeys).where(and(inArray(apiKeys.id, keyIds.slice(i, i + KEY_IDS_PER_QUERY)), isNull(apiKeys.revokedAt)));
    for (const r of rows) live.add(r.id);
  }
  return keyIds.filter((id) => !live.has(id));
}

/** Test hook: forget cached lookups (the cache is per isolate). */
export function clearApiKeyCache(): void {
  cache.clear();
}
