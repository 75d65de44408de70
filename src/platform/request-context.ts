import type { Context, MiddlewareHandler } from "hono";
import { routePath } from "hono/route";
import { newId } from "./ids.ts";
import { withD1Usage, usageFields } from "./d1-usage.ts";
import { log } from "./log.ts";
import { withHeaders } from "./response-headers.ts";
import { formatServerTiming } from "./server-timing.ts";
import type { AppEnv } from "./types.ts";

export const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;

/**
 * Gives every request an id (the caller's `X-Request-Id` when it is sane), echoes it on every
 * response with a `Server-Timing` header, and writes one structured log line per request. Never
 * logs keys or bodies.
 */
export function requestContext(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const incoming = c.req.header("X-Request-Id");
    const requestId = incoming && SAFE_REQUEST_ID.test(incoming) ? incoming : newId("req");
    const startedAt = Date.now();
    c.set("requestId", requestId);
    c.set("startedAt", startedAt);
    c.set("timings", []);
    // Every D1 statement the request causes is counted, per database, for its log line.
    const { usage } = await withD1Usage(() => next());
    const durationMs = Date.now() - startedAt;
    c.res = withHeaders(c.res, (h) => {
      h.set("X-Request-Id", requestId);
      h.set("Server-Timing", formatServerTiming(c.get("timings"), durationMs));
    });
    let route = c.req.path;
    try {
      route = routePath(c);
    } catch {
      /* not matched */
    }
    const fields = { requestId, method: c.req.method, route, status: c.res.status, durationMs, accountId: c.get("auth")?.accountId ?? null, ...usageFields(usage) };
    logAfterResponse(c, () => log.info("request", fields));
  };
}

/**
 * Writes the line once the response has been handed back: under `wrangler dev` each console.log
 * costs milliseconds (it travels over the inspector), which must not delay the client.
 */
function logAfterResponse(c: Context<AppEnv>, write: () => void): void {
  let ctx: Pick<ExecutionContext, "waitUntil"> | undefined;
  try {
    ctx = c.executionCtx;
  } catch {
    /* app.request() in tests: no execution context */
  }
  if (!ctx) return write();
  ctx.waitUntil(new Promise<void>((resolve) => setTimeout(() => resolve(write()), 0)));
}
