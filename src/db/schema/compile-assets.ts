import { sql } from "drizzle-orm";
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { accountListIndex, accountRow, createdAt } from "./columns.ts";

/**
 * Compile assets: files an account uploads once (`PUT /v1/assets/{sha256}`) and compiles name by
 * hash. The bytes are in R2 at `assets/<accountId>/<id>` (keyed by row, so a delete and a new upload
 * of the same hash never touch one object); this index keeps what quota and expiry need. A row is
 * written before its object (it reserves the quota) and counts as an asset once `stored_at` is set.
 */
export const compileAssets = sqliteTable(
  "compile_assets",
  {
    ...accountRow(),
    /** SHA-256 of the bytes, 64 lowercase hex digits; unique per account, never across accounts. */
    sha256: text("sha256").notNull(),
    sizeBytes: integer("size_bytes").notNull(),
    createdAt: createdAt(),
    /** The last upload or compile that used it; idle expiry counts from here. */
    lastUsedAt: integer("last_used_at").notNull(),
    /** When its object was written; null while the upload is under way. */
    storedAt: integer("stored_at"),
  },
  (t) => [
    uniqueIndex("compile_assets_account_sha_idx").on(t.accountId, t.sha256),
    accountListIndex("compile_assets_account_idx", t),
    index("compile_assets_last_used_idx").on(t.lastUsedAt),
    index("compile_assets_unstored_idx").on(t.createdAt).where(sql`stored_at IS NULL`),
  ],
);
