import type { MiddlewareHandler } from "hono";
import { errors } from "./errors.ts";
import { bodyLimitFor, takesBodyType } from "./limits.ts";
import type { AppEnv } from "./types.ts";

const JSON_TYPE = /^application\/([a-z0-9.+-]+\+)?json\s*(;|$)/i;

/** Paths whose bodies are not ours to shape (e.g. a network's webhook with its own content type). */
const RAW_BODY_PATHS: RegExp[] = [/^\/hooks\//];

/**
 * Reads a body stream whole, counting bytes as they arrive: past `limit` the stream is cancelled
 * and `onOver` thrown, so no more than `limit` bytes are ever buffered whatever the headers claim.
 * `onFirstBytes` runs once, when the first non-empty chunk arrives (to refuse a body early).
 */
export async function readCapped(body: ReadableStream<Uint8Array>, limit: number, onOver: () => Error, onFirstBytes?: () => void): Promise<Uint8Array> {
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (value.byteLength === 0) continue;
      if (size === 0) onFirstBytes?.();
      size += value.byteLength;
      if (size > limit) throw onOver();
      chunks.push(value);
    }
  } catch (err) {
    await reader.cancel().catch(() => {});
    throw err;
  }
  if (chunks.length === 1) return chunks[0]!;
  const out = new Uint8Array(size);
  let offset = 0;
  for (const c of chunks) {
    out.set(c, offset);
    offset += c.byteLength;
  }
  return out;
}

/**
 * 415 for a body that is not JSON and 413 over the route's documented limit, before any handler
 * reads the body. Decided by the body itself, not by headers: workerd hands POSTs an empty stream
 * even without Content-Length, and a JS-made request may carry a body without either header. The
 * body is read here under the limit and handed on buffered; an empty one counts as none.
 */
export function bodyGuard(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const method = c.req.method;
    // Other methods' bodies are never read by a route, so they cost nothing.
    if (method !== "POST" && method !== "PUT" && method !== "PATCH") return next();
    if (RAW_BODY_PATHS.some((p) => p.test(c.req.path))) return next();
    const raw = c.req.raw;
    if (raw.body === null) return next();
    const limit = bodyLimitFor(c.req.path);
    const declared = raw.headers.get("Content-Length");
    // A declared size over the limit is refused without reading (a lower one is not trusted).
    if (declared !== null && Number(declared) > limit) throw errors.payloadTooLarge(limit);
    const type = raw.headers.get("Content-Type") ?? "";
    const accepted = JSON_TYPE.test(type) || takesBodyType(c.req.path, type);
    const bytes = await readCapped(raw.body, limit, () => errors.payloadTooLarge(limit), () => {
      if (!accepted) throw errors.unsupportedMediaType();
    });
    c.req.raw = new Request(raw, { body: bytes.byteLength === 0 ? null : bytes });
    return next();
  };
}
