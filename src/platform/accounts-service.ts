import { and, desc, eq, lt, sql } from "drizzle-orm";
import type { Db } from "../db/client.ts";
import { apiKeys } from "../db/schema/index.ts";
import { generateApiKey, hashApiKey } from "./api-keys.ts";
import { errors } from "./errors.ts";
import { newId } from "./ids.ts";
import type { AuthContext } from "./types.ts";
import { iso } from "./time.ts";

export interface KeyView {
  id: string;
  name: string;
  prefix: string;
  createdAt: string;
  revokedAt: string | null;
}

export function toKeyView(row: typeof apiKeys.$inferSelect): KeyView {
  return { id: row.id, name: row.name, prefix: row.prefix, createdAt: iso(row.createdAt)!, revokedAt: iso(row.revokedAt) };
}

/** The caller's account, from the (briefly cached) key lookup: no extra query per request. */
export function accountView(auth: AuthContext) {
  return { id: auth.accountId, name: auth.accountName, plan: auth.plan, rateLimitPerMinute: auth.limitPerMinute, createdAt: iso(auth.accountCreatedAt)! };
}

/**
 * Creates a key unless the account already holds `maxActive` unrevoked ones (409
 * `key_limit_reached`). Count and insert are one statement, so concurrent creates cannot pass the
 * cap together. The secret is returned here and never again (only its hash is stored).
 */
export async function createKey(db: Db, accountId: string, name: string, maxActive: number): Promise<KeyView & { key: string }> {
  const { key, prefix } = generateApiKey();
  const row = { id: newId("key"), accountId, name, prefix, hash: await hashApiKey(key), createdAt: Date.now(), revokedAt: null };
  const result = await db.run(sql`
    INSERT INTO api_keys (id, account_id, name, prefix, hash, created_at)
    SELECT ${row.id}, ${accountId}, ${name}, ${prefix}, ${row.hash}, ${row.createdAt}
    WHERE (SELECT count(*) FROM api_keys WHERE account_id = ${accountId} AND revoked_at IS NULL) < ${maxActive}`);
  if (result.meta.changes !== 1) {
    throw errors.conflict("key_limit_reached", `This account already has ${maxActive} active API keys, the most its plan allows. Revoke one (DELETE /api/keys/{id}) first.`, { limit: maxActive });
  }
  return { ...toKeyView(row), key };
}

export async function listKeys(db: Db, accountId: string, limit: number, before?: string) {
  const where = before ? and(eq(apiKeys.accountId, accountId), lt(apiKeys.id, before)) : eq(apiKeys.accountId, accountId);
  return db.select().from(apiKeys).where(where).orderBy(desc(apiKeys.id)).limit(limit + 1).all();
}

export async function revokeKey(db: Db, accountId: string, keyId: string): Promise<KeyView> {
  const row = await db.select().from(apiKeys).where(and(eq(apiKeys.accountId, accountId), eq(apiKeys.id, keyId))).get();
  if (!row) throw errors.notFound("API key");
  if (row.revokedAt !== null) return toKeyView(row);
  const revokedAt = Date.now();
  await db.update(apiKeys).set({ revokedAt }).where(eq(apiKeys.id, keyId));
  return toKeyView({ ...row, revokedAt });
}
