import { and, eq } from "drizzle-orm";
import type { MiddlewareHandler } from "hono";
import { idempotencyKeys } from "../db/schema/index.ts";
import { fromBase64, randomBytes, sha256Hex, toBase64 } from "./crypto.ts";
import { ApiError, errors } from "./errors.ts";
import { PURGE_BATCH } from "./retention.ts";
import type { AppEnv } from "./types.ts";
import { directoryD1, directoryDb } from "./shards.ts";

export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
/** A first request that has not finished after this long is taken to have died; a retry may run. */
const IN_PROGRESS_STALE_MS = 5 * 60 * 1000;
/** Replies larger than this are kept in R2 rather than in the D1 row. */
const INLINE_BODY_MAX = 512 * 1024;
export const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;
/** Response headers worth replaying; rate-limit and request-id headers belong to the new request. */
const REPLAYED_HEADERS = ["content-type", "location", "etag", "content-disposition", "x-engine", "x-compile-duration-ms", "x-compile-pages", "x-output-pages", "x-compile-errors", "x-cache", "x-content-type-options", "content-security-policy"];

/**
 * `Idempotency-Key` for POSTs that create or send (docs/contracts.md §2): a retry with the same key and
 * body gets the first response (`Idempotent-Replayed: true`); the same key with another body is 422.
 * Keys are scoped by account and kept 24 h. 5xx replies are not stored, so the client may retry.
 *
 * Stored replies are encrypted (AES-GCM, key derived from SIGNING_SECRET): some hold a secret shown
 * only once (`tmk_` keys, `whsec_` secrets). Without SIGNING_SECRET no reply body is kept and a
 * replay answers the first status with an empty body.
 */
export function idempotency(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const key = c.req.header("Idempotency-Key");
    if (key === undefined) return next();
    if (!KEY_PATTERN.test(key)) {
      throw errors.invalidRequest("Idempotency-Key must be 1-255 visible ASCII characters.", [{ path: "header.Idempotency-Key", message: "invalid" }]);
    }
    const { accountId } = c.get("auth");
    const db = directoryDb(c.env);
    const body = await c.req.text();
    const requestHash = await sha256Hex(`${c.req.method} ${c.req.path}\n${body}`);
    const now = Date.now();
    const where = and(eq(idempotencyKeys.accountId, accountId), eq(idempotencyKeys.key, key));
    /** Our claim: every later write is conditional on it, so a request that lost the key changes nothing. */
    const ours = and(where, eq(idempotencyKeys.createdAt, now), eq(idempotencyKeys.requestHash, requestHash));
    const insert = () =>
      db
        .insert(idempotencyKeys)
        .values({ accountId, key, requestHash, state: "in_progress", createdAt: now, expiresAt: now + IDEMPOTENCY_TTL_MS })
        .onConflictDoNothing()
        .returning({ key: idempotencyKeys.key });

    if ((await insert()).length === 0) {
      const existing = await db.select().from(idempotencyKeys).where(where).get();
      if (existing) {
        const expired = existing.expiresAt <= now;
        const stale = existing.state === "in_progress" && existing.createdAt < now - IN_PROGRESS_STALE_MS;
        if (!expired && !stale) {
          if (existing.requestHash !== requestHash) {
            throw errors.unprocessable("idempotency_key_reused", "This Idempotency-Key was already used with a different request. Use a new key for a new request.");
          }
          if (existing.state === "in_progress") throw inProgress();
          return replay(c.env, existing);
        }
      }
      // Expired or abandoned: take the key over, only from the state just read (one conditional
      // UPDATE), so of two retries racing for it exactly one wins; the other is told to wait.
      const taken = existing
        ? await db
            .update(idempotencyKeys)
            .set({ requestHash, state: "in_progress", createdAt: now, expiresAt: now + IDEMPOTENCY_TTL_MS, responseStatus: null, responseBody: null, responseHeaders: null, responseR2Key: null })
            .where(and(where, eq(idempotencyKeys.createdAt, existing.createdAt), eq(idempotencyKeys.state, existing.state), eq(idempotencyKeys.requestHash, existing.requestHash)))
            .returning({ key: idempotencyKeys.key })
        : await insert();
      if (taken.length === 0) throw inProgress();
    }

    try {
      await next();
    } catch (err) {
      await db.delete(idempotencyKeys).where(ours);
      throw err;
    }
    const res = c.res;
    if (res.status >= 500) {
      await db.delete(idempotencyKeys).where(ours);
      return;
    }
    const headers: Record<string, string> = {};
    for (const name of REPLAYED_HEADERS) {
      const v = res.headers.get(name);
      if (v !== null) headers[name] = v;
    }
    let responseBody: string | null = null;
    let responseR2Key: string | null = null;
    const sealKey = await replayKey(c.env);
    if (sealKey) {
      const sealed = await seal(sealKey, new Uint8Array(await res.clone().arrayBuffer()));
      if (sealed.byteLength <= INLINE_BODY_MAX) responseBody = SEALED_PREFIX + toBase64(sealed);
      else {
        responseR2Key = `idempotency/${accountId}/${await sha256Hex(key)}`;
        await c.env.FILES.put(responseR2Key, sealed, { customMetadata: { sealed: SEALED_VERSION } });
      }
    }
    await db.update(idempotencyKeys).set({ state: "done", responseStatus: res.status, responseHeaders: JSON.stringify(headers), responseBody, responseR2Key }).where(ours);
  };
}

function inProgress(): ApiError {
  return new ApiError(409, "idempotency_key_in_progress", "A request with this Idempotency-Key is still being processed. Retry shortly.", {}, { "Retry-After": "1" });
}

async function replay(env: Env, row: typeof idempotencyKeys.$inferSelect): Promise<Response> {
  let body: Uint8Array | ArrayBuffer | null = null;
  if (row.responseBody !== null) {
    // Rows written before bodies were sealed hold plain base64 (they expire within 24 h).
    body = row.responseBody.startsWith(SEALED_PREFIX) ? await openSealed(env, fromBase64(row.responseBody.slice(SEALED_PREFIX.length))) : fromBase64(row.responseBody);
  } else if (row.responseR2Key) {
    const obj = await env.FILES.get(row.responseR2Key);
    if (obj) body = obj.customMetadata?.sealed ? await openSealed(env, new Uint8Array(await obj.arrayBuffer())) : await obj.arrayBuffer();
  }
  const headers = new Headers(JSON.parse(row.responseHeaders ?? "{}") as Record<string, string>);
  headers.set("Idempotent-Replayed", "true");
  return new Response(body as BodyInit | null, { status: row.responseStatus ?? 200, headers });
}

// ---- sealed replies ---------------------------------------------------------------------------

const SEALED_VERSION = "1";
const SEALED_PREFIX = `sealed${SEALED_VERSION}:`;
const IV_BYTES = 12;
const keys = new Map<string, Promise<CryptoKey>>();

/** AES-256-GCM key for stored replies, derived from SIGNING_SECRET with HKDF (once per isolate). */
function replayKey(env: Env): Promise<CryptoKey> | null {
  const secret = env.SIGNING_SECRET;
  if (!secret) return null;
  let key = keys.get(secret);
  if (!key) {
    key = (async () => {
      const material = await crypto.subtle.importKey("raw", new TextEncoder().encode(secret), "HKDF", false, ["deriveKey"]);
      return crypto.subtle.deriveKey(
        { name: "HKDF", hash: "SHA-256", salt: new Uint8Array(0), info: new TextEncoder().encode("texmsg idempotent replies v1") },
        material,
        { name: "AES-GCM", length: 256 },
        false,
        ["encrypt", "decrypt"],
      );
    })();
    keys.set(secret, key);
  }
  return key;
}

/** IV (12 random bytes) followed by the ciphertext and its tag. */
async function seal(key: CryptoKey, plain: Uint8Array): Promise<Uint8Array> {
  const iv = randomBytes(IV_BYTES);
  const cipher = new Uint8Array(await crypto.subtle.encrypt({ name: "AES-GCM", iv }, key, plain as Uint8Array<ArrayBuffer>));
  const out = new Uint8Array(IV_BYTES + cipher.byteLength);
  out.set(iv);
  out.set(cipher, IV_BYTES);
  return out;
}

/** The reply, or null when it cannot be opened (SIGNING_SECRET changed since): answered without a body. */
async function openSealed(env: Env, sealed: Uint8Array): Promise<ArrayBuffer | null> {
  const key = await replayKey(env);
  if (!key || sealed.byteLength < IV_BYTES) return null;
  try {
    return await crypto.subtle.decrypt({ name: "AES-GCM", iv: sealed.subarray(0, IV_BYTES) }, key, sealed.subarray(IV_BYTES));
  } catch {
    return null;
  }
}

/**
 * Cron: drop expired keys, oldest first, a bounded batch per tick (their R2 bodies expire by the
 * bucket's lifecycle rule on `idempotency/`).
 */
export async function purgeExpiredIdempotencyKeys(env: Env, now = Date.now()): Promise<void> {
  await directoryD1(env).prepare("DELETE FROM idempotency_keys WHERE rowid IN (SELECT rowid FROM idempotency_keys WHERE expires_at < ?1 ORDER BY expires_at LIMIT ?2)")
    .bind(now, PURGE_BATCH)
    .run();
}
