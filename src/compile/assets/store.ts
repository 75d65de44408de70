import { and, desc, eq, inArray, isNotNull, lt } from "drizzle-orm";
import type { Db } from "../../db/client.ts";
import { compileAssets } from "../../db/schema/index.ts";
import { itemsPerStatement } from "../../platform/d1.ts";
import { chunk } from "../../platform/batching.ts";

/** The only reader and writer of `compile_assets` rows and their R2 objects' keys. */
export type AssetRow = typeof compileAssets.$inferSelect;

/** Under the account's prefix, by row: a row and its object come and go together. */
export const assetKey = (accountId: string, id: string) => `assets/${accountId}/${id}`;

/** Hashes per `IN (...)`, with room for the account id. */
const HASHES_PER_SELECT = itemsPerStatement(1, 2);

export async function findAsset(db: Db, accountId: string, sha256: string): Promise<AssetRow | undefined> {
  return db.select().from(compileAssets).where(and(eq(compileAssets.accountId, accountId), eq(compileAssets.sha256, sha256))).get();
}

/** Stored assets of this account among `hashes` (at most one row per hash). */
export async function storedAssets(db: Db, accountId: string, hashes: string[]): Promise<AssetRow[]> {
  const out: AssetRow[] = [];
  for (const part of chunk(hashes, HASHES_PER_SELECT)) {
    out.push(...(await db.select().from(compileAssets).where(and(eq(compileAssets.accountId, accountId), inArray(compileAssets.sha256, part), isNotNull(compileAssets.storedAt))).all()));
  }
  return out;
}

export interface Quota {
  bytes: number;
  files: number;
}

type RawRow = { id: string; account_id: string; sha256: string; size_bytes: number; created_at: number; last_used_at: number; stored_at: number | null };
const fromRaw = (r: RawRow): AssetRow => ({ id: r.id, accountId: r.account_id, sha256: r.sha256, sizeBytes: r.size_bytes, createdAt: r.created_at, lastUsedAt: r.last_used_at, storedAt: r.stored_at });

/**
 * Inserts the row of a new upload if the account stays within its quota with it, in one statement
 * (D1 runs statements one at a time, so two uploads at once cannot both take the last bytes). Null
 * when over the quota or when the account already has a row for this hash.
 */
export async function reserveAsset(d1: D1Database, row: { id: string; accountId: string; sha256: string; sizeBytes: number; now: number }, quota: Quota): Promise<AssetRow | null> {
  const inserted = await d1
    .prepare(
      `INSERT INTO compile_assets (id, account_id, sha256, size_bytes, created_at, last_used_at, stored_at)
       SELECT ?1, ?2, ?3, ?4, ?5, ?5, NULL
       WHERE (SELECT count(*) FROM compile_assets WHERE account_id = ?2) < ?6
         AND (SELECT coalesce(sum(size_bytes), 0) FROM compile_assets WHERE account_id = ?2) + ?4 <= ?7
       ON CONFLICT (account_id, sha256) DO NOTHING
       RETURNING *`,
    )
    .bind(row.id, row.accountId, row.sha256, row.sizeBytes, row.now, quota.files, quota.bytes)
    .first<RawRow>();
  return inserted ? fromRaw(inserted) : null;
}

/** The upload's object is written: the row is an asset now. False when the row was deleted meanwhile. */
export async function markStored(db: Db, id: string, now: number): Promise<boolean> {
  const rows = await db.update(compileAssets).set({ storedAt: now, lastUsedAt: now }).where(eq(compileAssets.id, id)).returning({ id: compileAssets.id });
  return rows.length > 0;
}

export async function deleteRow(db: Db, id: string): Promise<void> {
  await db.delete(compileAssets).where(eq(compileAssets.id, id));
}

/** Deletes this account's row of the hash (stored or not); the row as it was, or undefined. */
export async function deleteAssetRow(db: Db, accountId: string, sha256: string): Promise<AssetRow | undefined> {
  const rows = await db.delete(compileAssets).where(and(eq(compileAssets.accountId, accountId), eq(compileAssets.sha256, sha256))).returning();
  return rows[0];
}

/** Marks assets used now (an upload of one already stored, or a compile naming them). */
export async function touchAssets(db: Db, accountId: string, hashes: string[], now: number): Promise<void> {
  for (const part of chunk(hashes, itemsPerStatement(1, 3))) {
    await db.update(compileAssets).set({ lastUsedAt: now }).where(and(eq(compileAssets.accountId, accountId), inArray(compileAssets.sha256, part)));
  }
}

/** A page of the account's stored assets, newest first (limit + 1 rows: see toPage). */
export async function listAssets(db: Db, accountId: string, limit: number, before?: string): Promise<AssetRow[]> {
  const conds = [eq(compileAssets.accountId, accountId), isNotNull(compileAssets.storedAt)];
  if (before) conds.push(lt(compileAssets.id, before));
  return db.select().from(compileAssets).where(and(...conds)).orderBy(desc(compileAssets.id)).limit(limit + 1).all();
}

/** What the account holds against its quota (uploads under way included: they reserved their bytes). */
export async function usageOf(d1: D1Database, accountId: string): Promise<{ bytes: number; files: number }> {
  const r = await d1.prepare("SELECT count(*) AS files, coalesce(sum(size_bytes), 0) AS bytes FROM compile_assets WHERE account_id = ?1").bind(accountId).first<{ files: number; bytes: number }>();
  return { bytes: r?.bytes ?? 0, files: r?.files ?? 0 };
}

/**
 * Deletes at most `limit` rows that expire (unused since `idleBefore`, or uploads that never finished,
 * begun before `unstoredBefore`), oldest first, and answers them so their objects can go. Rows first:
 * a compile that refreshed an asset a moment later finds it gone rather than a row without its bytes.
 */
export async function takeExpiredAssets(d1: D1Database, idleBefore: number | null, unstoredBefore: number, limit: number): Promise<Array<{ id: string; account_id: string }>> {
  const out: Array<{ id: string; account_id: string }> = [];
  if (idleBefore !== null) {
    const idle = await d1
      .prepare("DELETE FROM compile_assets WHERE id IN (SELECT id FROM compile_assets WHERE last_used_at < ?1 ORDER BY last_used_at LIMIT ?2) AND last_used_at < ?1 RETURNING id, account_id")
      .bind(idleBefore, limit)
      .all<{ id: string; account_id: string }>();
    out.push(...idle.results);
  }
  const unstored = await d1
    .prepare("DELETE FROM compile_assets WHERE id IN (SELECT id FROM compile_assets WHERE stored_at IS NULL AND created_at < ?1 ORDER BY created_at LIMIT ?2) RETURNING id, account_id")
    .bind(unstoredBefore, limit)
    .all<{ id: string; account_id: string }>();
  out.push(...unstored.results);
  return out;
}
