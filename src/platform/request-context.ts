import type { MiddlewareHandler } from "hono";
import { routePath } from "hono/route";
import { newId } from "./ids.ts";
import { withHeaders } from "./response-headers.ts";
import type { AppEnv } from "./types.ts";

const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;

/**
 * Gives every request an id (the caller's `X-Request-Id` when it is sane), echoes it on every
 * response, and writes one structured log line per request. Never logs keys or bodies.
 */
export function requestContext(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const incoming = c.req.header("X-Request-Id");
    const requestId = incoming && SAFE_REQUEST_ID.test(incoming) ? incoming : newId("req");
    const startedAt = Date.now();
    c.set("requestId", requestId);
    c.set("startedAt", startedAt);
    await next();
    c.res = withHeaders(c.res, (h) => h.set("X-Request-Id", requestId));
    let route = c.req.path;
    try {
      route = routePath(c);
    } catch {
      /* not matched */
    }
    console.log(
      JSON.stringify({
        level: "info",
        msg: "request",
        requestId,
        method: c.req.method,
        route,
        status: c.res.status,
        durationMs: Date.now() - startedAt,
        accountId: c.get("auth")?.accountId ?? null,
      }),
    );
  };
}
