import type { MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import { errors } from "./errors.ts";
import { bodyLimitFor } from "./limits.ts";
import type { AppEnv } from "./types.ts";

const JSON_TYPE = /^application\/([a-z0-9.+-]+\+)?json\s*(;|$)/i;

/** Paths whose bodies are not ours to shape (e.g. a network's webhook with its own content type). */
const RAW_BODY_PATHS: RegExp[] = [/^\/hooks\//];

/**
 * 415 for a body that is not JSON and 413 over the route's documented limit, before any handler
 * reads the body. A chunked body without Content-Length is counted while it streams.
 */
export function bodyGuard(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const method = c.req.method;
    if (method !== "POST" && method !== "PUT" && method !== "PATCH") return next();
    if (RAW_BODY_PATHS.some((p) => p.test(c.req.path))) return next();
    const length = c.req.header("Content-Length");
    const hasBody = (length !== undefined && length !== "0") || c.req.header("Transfer-Encoding") !== undefined;
    if (!hasBody) return next();
    const type = c.req.header("Content-Type") ?? "";
    if (!JSON_TYPE.test(type)) throw errors.unsupportedMediaType();
    const limit = bodyLimitFor(c.req.path);
    if (length !== undefined && Number(length) > limit) throw errors.payloadTooLarge(limit);
    return bodyLimit({ maxSize: limit, onError: () => { throw errors.payloadTooLarge(limit); } })(c, next);
  };
}
