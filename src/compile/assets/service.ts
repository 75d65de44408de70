import { directoryDb, directoryD1 } from "../../platform/shards.ts";
import { config } from "../../platform/config.ts";
import { sha256Hex } from "../../platform/crypto.ts";
import { ApiError, errors } from "../../platform/errors.ts";
import { newId } from "../../platform/ids.ts";
import { log } from "../../platform/log.ts";
import { decodeCursor, IdCursor, toPage } from "../../platform/pagination.ts";
import type { Plan } from "../../platform/plans.ts";
import { COMPILE_LIMITS as L } from "../limits.ts";
import { toAssetView } from "./mapper.ts";
import type { AssetUsage, CompileAsset, CompileAssetPage } from "./schemas.ts";
import { assetKey, deleteAssetRow, deleteRow, findAsset, listAssets, markStored, reserveAsset, touchAssets, usageOf } from "./store.ts";

export type Owner = { accountId: string; plan: Plan };

const idleMs = (env: Env) => config(env).assets.idleMs;
const quotaOf = (env: Env, plan: Plan) => config(env).assets.quota[plan];

/**
 * Stores an upload under its hash. The bytes must hash to the name (else 422 `hash_mismatch`); an
 * asset the account already has is only marked used (200); a new one must fit the plan's quota
 * (else 409 `asset_quota_exceeded`) and is 201. The row is reserved first, then the object written,
 * then the row marked stored: a delete that lands in between makes the upload start over, once.
 */
export async function putAsset(env: Env, owner: Owner, sha256: string, bytes: Uint8Array, now = Date.now()): Promise<{ created: boolean; asset: CompileAsset }> {
  if (bytes.byteLength > L.maxAssetBytes) throw new ApiError(413, "payload_too_large", `The asset is ${bytes.byteLength} bytes, over the limit of ${L.maxAssetBytes}.`, { limit: "assetBytes", limitValue: L.maxAssetBytes });
  const actual = await sha256Hex(bytes);
  if (actual !== sha256) throw errors.unprocessable("hash_mismatch", `The body's SHA-256 is ${actual}, not the ${sha256} of the path: upload it under its own hash.`, { expected: sha256, actual });
  const db = directoryDb(env);
  for (let attempt = 0; attempt < 2; attempt++) {
    let row = await findAsset(db, owner.accountId, sha256);
    let reserved = false;
    if (row?.storedAt != null) {
      await touchAssets(db, owner.accountId, [sha256], now);
      return { created: false, asset: toAssetView({ ...row, lastUsedAt: now }, idleMs(env)) };
    }
    // no row, or another upload of these bytes under way (or given up): this one stores them
    if (!row) {
      const quota = quotaOf(env, owner.plan);
      row = (await reserveAsset(directoryD1(env), { id: newId("ast", now), accountId: owner.accountId, sha256, sizeBytes: bytes.byteLength, now }, quota)) ?? undefined;
      reserved = row !== undefined;
      if (!row) {
        if (await findAsset(db, owner.accountId, sha256)) continue; // a parallel upload inserted it first
        const used = await usageOf(directoryD1(env), owner.accountId);
        throw errors.conflict(
          "asset_quota_exceeded",
          `This asset (${bytes.byteLength} bytes) does not fit the plan's quota of ${quota.bytes} bytes and ${quota.files} assets: ${used.bytes} bytes in ${used.files} assets are held. Delete some first (DELETE /v1/assets/{sha256}).`,
          { sizeBytes: bytes.byteLength, usedBytes: used.bytes, usedFiles: used.files, quotaBytes: quota.bytes, quotaFiles: quota.files },
        );
      }
    }
    const key = assetKey(owner.accountId, row.id);
    try {
      await env.FILES.put(key, bytes, { customMetadata: { sha256 } });
    } catch (err) {
      log.error("asset write failed", { error: String(err) });
      if (reserved) await deleteRow(db, row.id).catch(() => {});
      throw errors.unavailable("The asset could not be stored. Retry shortly.", 5);
    }
    if (await markStored(db, row.id, now)) return { created: true, asset: toAssetView({ ...row, storedAt: now, lastUsedAt: now }, idleMs(env)) };
    // deleted while this upload wrote it: its object goes too, and the upload starts over
    await env.FILES.delete(key);
  }
  throw errors.conflict("asset_busy", "The asset was deleted while it was uploaded. Upload it again.");
}

/** A stored asset of this account; another account's, or one still uploading, is 404 like a missing one. */
export async function getAsset(env: Env, accountId: string, sha256: string): Promise<CompileAsset> {
  const row = await findAsset(directoryDb(env), accountId, sha256);
  if (row?.storedAt == null) throw errors.notFound("asset");
  return toAssetView(row, idleMs(env));
}

/** The row first, then its object (keyed by row, so a new upload of the hash is another object). Null: the 204 has no body. */
export async function deleteAsset(env: Env, accountId: string, sha256: string): Promise<null> {
  const row = await deleteAssetRow(directoryDb(env), accountId, sha256);
  if (!row) throw errors.notFound("asset");
  await env.FILES.delete(assetKey(accountId, row.id)).catch((err) => log.error("asset object delete failed", { key: assetKey(accountId, row.id), error: String(err) }));
  return null;
}

export async function usage(env: Env, owner: Owner): Promise<AssetUsage> {
  const used = await usageOf(directoryD1(env), owner.accountId);
  const quota = quotaOf(env, owner.plan);
  return { bytes: used.bytes, files: used.files, quotaBytes: quota.bytes, quotaFiles: quota.files };
}

export async function listAssetViews(env: Env, owner: Owner, q: { limit: number; cursor?: string | undefined }): Promise<CompileAssetPage> {
  const after = decodeCursor(q.cursor, IdCursor);
  const [rows, used] = await Promise.all([listAssets(directoryDb(env), owner.accountId, q.limit, after?.id), usage(env, owner)]);
  const page = toPage(rows, q.limit, (r) => ({ id: r.id }));
  const idle = idleMs(env);
  return { data: page.data.map((r) => toAssetView(r, idle)), nextCursor: page.nextCursor, usage: used };
}
