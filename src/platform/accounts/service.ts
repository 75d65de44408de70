import { and, desc, eq, lt, sql } from "drizzle-orm";
import { apiKeys } from "../../db/schema/index.ts";
import { generateApiKey, hashApiKey } from "../api-keys.ts";
import { errors } from "../errors.ts";
import { newId } from "../ids.ts";
import { decodeCursor, IdCursor, toPage, type Page } from "../pagination.ts";
import { keyLimitFor } from "../plans.ts";
import type { AuthContext } from "../types.ts";
import { toAccountView, toKeyView } from "./mapper.ts";
import type { AccountView, KeyView } from "./schemas.ts";
import { directoryDb } from "../shards.ts";

/** The caller's account (no query: the key lookup carries it). */
export function getAccount(auth: AuthContext): AccountView {
  return toAccountView(auth);
}

/**
 * Creates a key unless the account already holds `maxActive` unrevoked ones (409
 * `key_limit_reached`). Count and insert are one statement, so concurrent creates cannot pass the
 * cap together. The secret is returned here and never again (only its hash is stored).
 */
export async function createKey(env: Env, auth: AuthContext, name: string): Promise<KeyView & { key: string }> {
  const { accountId } = auth;
  const maxActive = keyLimitFor(auth.plan, env);
  const db = directoryDb(env);
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

export async function listKeys(env: Env, accountId: string, q: { limit: number; cursor?: string }): Promise<Page<KeyView>> {
  const before = decodeCursor(q.cursor, IdCursor)?.id;
  const where = before ? and(eq(apiKeys.accountId, accountId), lt(apiKeys.id, before)) : eq(apiKeys.accountId, accountId);
  const rows = await directoryDb(env).select().from(apiKeys).where(where).orderBy(desc(apiKeys.id)).limit(q.limit + 1).all();
  const page = toPage(rows, q.limit, (r) => ({ id: r.id }));
  return { data: page.data.map(toKeyView), nextCursor: page.nextCursor };
}

export async function revokeKey(env: Env, accountId: string, keyId: string): Promise<KeyView> {
  const db = directoryDb(env);
  const row = await db.select().from(apiKeys).where(and(eq(apiKeys.accountId, accountId), eq(apiKeys.id, keyId))).get();
  if (!row) throw errors.notFound("API key");
  if (row.revokedAt !== null) return toKeyView(row);
  const revokedAt = Date.now();
  await db.update(apiKeys).set({ revokedAt }).where(eq(apiKeys.id, keyId));
  return toKeyView({ ...row, revokedAt });
}
