import { and, eq, lt } from "drizzle-orm";
import type { MiddlewareHandler } from "hono";
import { getDb } from "../db/client.ts";
import { idempotencyKeys } from "../db/schema/index.ts";
import { fromBase64, sha256Hex, toBase64 } from "./crypto.ts";
import { ApiError, errors } from "./errors.ts";
import type { AppEnv } from "./types.ts";

export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
/** A first request that has not finished after this long is taken to have died; a retry may run. */
const IN_PROGRESS_STALE_MS = 5 * 60 * 1000;
/** Replies larger than this are kept in R2 rather than in the D1 row. */
const INLINE_BODY_MAX = 512 * 1024;
export const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;
/** Response headers worth replaying; rate-limit and request-id headers belong to the new request. */
const REPLAYED_HEADERS = ["content-type", "location", "etag", "content-disposition", "x-engine", "x-compile-duration-ms", "x-compile-pages", "x-cache"];

/**
 * `Idempotency-Key` for POSTs that create or send (docs/contracts.md §2): a retry with the same key and
 * body gets the first response (`Idempotent-Replayed: true`); the same key with another body is 422.
 * Keys are scoped by account and kept 24 h. 5xx replies are not stored, so the client may retry.
 */
export function idempotency(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const key = c.req.header("Idempotency-Key");
    if (key === undefined) return next();
    if (!KEY_PATTERN.test(key)) {
      throw errors.invalidRequest("Idempotency-Key must be 1-255 visible ASCII characters.", [{ path: "header.Idempotency-Key", message: "invalid" }]);
    }
    const { accountId } = c.get("auth");
    const db = getDb(c.env.DB);
    const body = await c.req.text();
    const requestHash = await sha256Hex(`${c.req.method} ${c.req.path}\n${body}`);
    const now = Date.now();
    const where = and(eq(idempotencyKeys.accountId, accountId), eq(idempotencyKeys.key, key));

    const inserted = await db
      .insert(idempotencyKeys)
      .values({ accountId, key, requestHash, state: "in_progress", createdAt: now, expiresAt: now + IDEMPOTENCY_TTL_MS })
      .onConflictDoNothing()
      .returning({ key: idempotencyKeys.key });

    if (inserted.length === 0) {
      const existing = await db.select().from(idempotencyKeys).where(where).get();
      if (existing) {
        const expired = existing.expiresAt <= now;
        const stale = existing.state === "in_progress" && existing.createdAt < now - IN_PROGRESS_STALE_MS;
        if (!expired && !stale) {
          if (existing.requestHash !== requestHash) {
            throw errors.unprocessable("idempotency_key_reused", "This Idempotency-Key was already used with a different request. Use a new key for a new request.");
          }
          if (existing.state === "in_progress") {
            throw new ApiError(409, "idempotency_key_in_progress", "A request with this Idempotency-Key is still being processed. Retry shortly.", {}, { "Retry-After": "1" });
          }
          return replay(c.env, existing);
        }
      }
      // Expired or abandoned: take the key over for this request.
      await db.update(idempotencyKeys).set({ requestHash, state: "in_progress", createdAt: now, expiresAt: now + IDEMPOTENCY_TTL_MS, responseStatus: null, responseBody: null, responseHeaders: null, responseR2Key: null }).where(where);
    }

    try {
      await next();
    } catch (err) {
      await db.delete(idempotencyKeys).where(where);
      throw err;
    }
    const res = c.res;
    if (res.status >= 500) {
      await db.delete(idempotencyKeys).where(where);
      return;
    }
    const bytes = new Uint8Array(await res.clone().arrayBuffer());
    const headers: Record<string, string> = {};
    for (const name of REPLAYED_HEADERS) {
      const v = res.headers.get(name);
      if (v !== null) headers[name] = v;
    }
    let responseBody: string | null = null;
    let responseR2Key: string | null = null;
    if (bytes.byteLength <= INLINE_BODY_MAX) responseBody = toBase64(bytes);
    else {
      responseR2Key = `idempotency/${accountId}/${await sha256Hex(key)}`;
      await c.env.FILES.put(responseR2Key, bytes);
    }
    await db.update(idempotencyKeys).set({ state: "done", responseStatus: res.status, responseHeaders: JSON.stringify(headers), responseBody, responseR2Key }).where(where);
  };
}

async function replay(env: Env, row: typeof idempotencyKeys.$inferSelect): Promise<Response> {
  let body: BodyInit | null = row.responseBody !== null ? fromBase64(row.responseBody) : null;
  if (row.responseR2Key) {
    const obj = await env.FILES.get(row.responseR2Key);
    body = obj ? await obj.arrayBuffer() : null;
  }
  const headers = new Headers(JSON.parse(row.responseHeaders ?? "{}") as Record<string, string>);
  headers.set("Idempotent-Replayed", "true");
  return new Response(body, { status: row.responseStatus ?? 200, headers });
}

/** Cron: drop expired keys (their R2 bodies expire by the bucket's lifecycle rule on `idempotency/`). */
export async function purgeExpiredIdempotencyKeys(env: Env, now = Date.now()): Promise<void> {
  await getDb(env.DB).delete(idempotencyKeys).where(lt(idempotencyKeys.expiresAt, now));
}
