import { directoryDb } from "../../platform/shards.ts";
import { toBase64 } from "../../platform/crypto.ts";
import { errors } from "../../platform/errors.ts";
import { decodedBytes, tooLarge } from "../input.ts";
import { COMPILE_LIMITS as L } from "../limits.ts";
import type { CompileFile, CompileFileEntry } from "../schemas.ts";
import { assetKey, type AssetRow, storedAssets, touchAssets } from "./store.ts";

const encoder = new TextEncoder();

/** Compiles sent within this long of an asset's last recorded use do not write it again. */
const TOUCH_EVERY_MS = 60_000;

/**
 * A compile request's `files` with every asset swapped for its bytes (base64), so the cache, the
 * job input and the compiler see plain files. Only this account's stored assets count: any other
 * hash is unknown (422 `unknown_assets`, all of them at once), whoever else holds those bytes. The
 * request's limits are checked on the sizes in D1 before any object is read, so no request reads
 * more than it may hold; the assets used are marked so (their idle expiry starts again).
 */
export async function withAssets<T extends { source: string; files?: CompileFileEntry[] | undefined }>(env: Env, accountId: string, body: T, now = Date.now()): Promise<Omit<T, "files"> & { files?: CompileFile[] }> {
  const entries = body.files;
  if (!entries?.some((f) => f.asset !== undefined)) return body as Omit<T, "files"> & { files?: CompileFile[] };
  if (entries.length > L.maxFiles) throw tooLarge("files", `files has ${entries.length} entries, over the limit of ${L.maxFiles}.`, L.maxFiles);
  const hashes = [...new Set(entries.flatMap((f) => (f.asset !== undefined ? [f.asset] : [])))];
  const db = directoryDb(env);
  const rows = new Map((await storedAssets(db, accountId, hashes)).map((r) => [r.sha256, r]));
  unknownIf(hashes.filter((h) => !rows.has(h)));

  let total = encoder.encode(body.source).byteLength;
  for (const f of entries) total += f.asset !== undefined ? rows.get(f.asset)!.sizeBytes : decodedBytes(f.content!, f.encoding);
  if (total > L.maxTotalBytes) throw tooLarge("totalBytes", `source and files are ${total} bytes decoded (assets included), over the limit of ${L.maxTotalBytes}.`, L.maxTotalBytes);

  const stale = [...rows.values()].filter((r) => r.lastUsedAt < now - TOUCH_EVERY_MS).map((r) => r.sha256);
  const [contents] = await Promise.all([readAll(env.FILES, accountId, [...rows.values()]), stale.length > 0 ? touchAssets(db, accountId, stale, now) : undefined]);
  unknownIf(hashes.filter((h) => !contents.has(h)));
  const files = entries.map((f): CompileFile => (f.asset !== undefined ? { path: f.path, content: contents.get(f.asset)!, encoding: "base64" } : { path: f.path, content: f.content!, encoding: f.encoding }));
  return { ...body, files };
}

/** The objects' bytes as base64, by hash; an object gone (deleted or expired meanwhile) is left out. */
async function readAll(bucket: R2Bucket, accountId: string, rows: AssetRow[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  await Promise.all(
    rows.map(async (r) => {
      const obj = await bucket.get(assetKey(accountId, r.id));
      if (!obj) return;
      if (obj.size !== r.sizeBytes) {
        await obj.body.cancel();
        return;
      }
      out.set(r.sha256, toBase64(await obj.arrayBuffer()));
    }),
  );
  return out;
}

function unknownIf(unknown: string[]): void {
  if (unknown.length === 0) return;
  throw errors.unprocessable(
    "unknown_assets",
    `${unknown.length} asset(s) named in files are not this account's: ${unknown.slice(0, 5).join(", ")}${unknown.length > 5 ? ", …" : ""}. Upload them first (PUT /v1/assets/{sha256}).`,
    { assets: unknown },
  );
}
