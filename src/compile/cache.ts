import { sha256Hex } from "../platform/crypto.ts";
import type { CompileInput } from "./compiler.ts";
import type { Engine } from "./schemas.ts";

/**
 * Content-addressed cache of successful compiles in R2 (`cache/<key>.pdf`). Entries are scoped to
 * the account: a shared cache would let one account learn, from `X-Cache`, whether another compiled
 * a given document. Expiry: `expiresAt` in the object's custom metadata, checked on every read (an
 * R2 lifecycle rule on `cache/` deletes the objects themselves; see the README's deploy steps).
 */
const VERSION = "compile-cache/v1";

/**
 * sha256 over a canonical encoding: a JSON array (fixed order, no object keys) of the version,
 * account, engine, source and the files sorted by path. `timeoutMs` is left out: it does not change
 * a successful result.
 */
export async function cacheKey(accountId: string, input: CompileInput): Promise<string> {
  const files = [...(input.files ?? [])].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)).map((f) => [f.path, f.encoding, f.content]);
  return sha256Hex(JSON.stringify([VERSION, accountId, input.engine, input.source, files]));
}

const objectKey = (key: string) => `cache/${key}.pdf`;

export interface CachedPdf {
  body: ReadableStream;
  size: number;
  engine: Engine;
  pages: number | null;
}

export async function readCache(bucket: R2Bucket, key: string, now = Date.now()): Promise<CachedPdf | null> {
  const obj = await bucket.get(objectKey(key));
  if (!obj) return null;
  const meta = obj.customMetadata ?? {};
  if (!(Number(meta.expiresAt) > now)) {
    await obj.body.cancel();
    return null;
  }
  return { body: obj.body, size: obj.size, engine: meta.engine as Engine, pages: meta.pages ? Number(meta.pages) : null };
}

export async function writeCache(bucket: R2Bucket, key: string, pdf: ArrayBuffer, info: { engine: Engine; pages: number | null; ttlSeconds: number; now?: number }): Promise<void> {
  const now = info.now ?? Date.now();
  await bucket.put(objectKey(key), pdf, {
    httpMetadata: { contentType: "application/pdf" },
    customMetadata: { engine: info.engine, pages: info.pages === null ? "" : String(info.pages), createdAt: String(now), expiresAt: String(now + info.ttlSeconds * 1000) },
  });
}
