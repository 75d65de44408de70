import type { Context, MiddlewareHandler } from "hono";
import { errors } from "./errors.ts";
import type { RateLimitDecision } from "./rate-limiter.ts";
import type { AppEnv } from "./types.ts";

const DEFAULT_UNAUTH_LIMIT = 60;

export function clientIp(c: Context<AppEnv>): string {
  return c.req.header("CF-Connecting-IP") ?? c.req.header("X-Real-IP") ?? "unknown";
}

async function take(env: Env, bucket: string, limit: number): Promise<RateLimitDecision> {
  const stub = env.RATE_LIMITER.getByName(bucket) as unknown as DurableObjectStub<import("./rate-limiter.ts").RateLimiter>;
  return (await stub.take(limit)) as RateLimitDecision;
}

export function applyRateLimitHeaders(headers: Headers, d: RateLimitDecision, now = Date.now()): void {
  const resetIn = Math.max(0, d.resetAt - Math.floor(now / 1000));
  headers.set("X-RateLimit-Limit", String(d.limit));
  headers.set("X-RateLimit-Remaining", String(d.remaining));
  headers.set("X-RateLimit-Reset", String(d.resetAt));
  // IETF draft-ietf-httpapi-ratelimit-headers: policy (quota q per window w) and current state.
  headers.set("RateLimit-Policy", `"default";q=${d.limit};w=60`);
  headers.set("RateLimit", `"default";r=${d.remaining};t=${resetIn}`);
}

/**
 * Charges the request to the caller's bucket: the API key when auth resolved one, else the client IP
 * (so keys cannot be guessed at speed). Runs before the 401 is raised so that 401s carry the headers too.
 */
export function rateLimit(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const auth = c.get("auth");
    const decision = auth
      ? await take(c.env, `key:${auth.keyId}`, auth.limitPerMinute)
      : await take(c.env, `ip:${clientIp(c)}`, Number(c.env.UNAUTH_RATE_LIMIT_PER_MIN) || DEFAULT_UNAUTH_LIMIT);
    if (!decision.allowed) {
      const err = errors.rateLimited(decision.retryAfter);
      for (const [k, v] of Object.entries(err.headers)) c.header(k, v);
      const res = c.json(err.toBody(), 429);
      applyRateLimitHeaders(res.headers, decision);
      return res;
    }
    await next();
    c.res = withHeaders(c.res, (h) => applyRateLimitHeaders(h, decision));
  };
}

/** Responses from fetch() have immutable headers; copy when needed. */
export function withHeaders(res: Response, edit: (h: Headers) => void): Response {
  try {
    edit(res.headers);
    return res;
  } catch {
    const copy = new Response(res.body, res);
    edit(copy.headers);
    return copy;
  }
}
