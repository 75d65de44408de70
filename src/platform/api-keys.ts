import { eq } from "drizzle-orm";
import type { Db } from "../db/client.ts";
import { accounts, apiKeys } from "../db/schema/index.ts";
import { hashApiKey } from "./key-format.ts";
import { limitFor, type Plan } from "./plans.ts";
import type { AuthContext } from "./types.ts";

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
  const row = await db
    .select({ keyId: apiKeys.id, revokedAt: apiKeys.revokedAt, accountId: accounts.id, name: accounts.name, createdAt: accounts.createdAt, plan: accounts.plan, custom: accounts.rateLimitPerMinute })
    .from(apiKeys)
    .innerJoin(accounts, eq(accounts.id, apiKeys.accountId))
    .where(eq(apiKeys.hash, hash))
    .get();
  if (!row || row.revokedAt !== null) {
    cache.delete(hash);
    return null;
  }
  const auth: AuthContext = { accountId: row.accountId, accountName: row.name, accountCreatedAt: row.createdAt, keyId: row.keyId, plan: row.plan as Plan, limitPerMinute: limitFor(row.plan as Plan, row.custom) };
  if (cache.size >= CACHE_MAX) cache.clear();
  cache.set(hash, { auth, expiresAt: now + AUTH_CACHE_TTL_MS });
  return auth;
}

/** Test hook: forget cached lookups (the cache is per isolate). */
export function clearApiKeyCache(): void {
  cache.clear();
}
