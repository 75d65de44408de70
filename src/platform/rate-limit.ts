import type { Context, MiddlewareHandler } from "hono";
import { errors } from "./errors.ts";
import { permitPool } from "./rate-limit-permits.ts";
import type { RateLimiter } from "./rate-limiter.ts";
import type { RateLimitDecision } from "./sliding-window.ts";
import { withHeaders } from "./response-headers.ts";
import { timed } from "./server-timing.ts";
import type { AppEnv } from "./types.ts";
import { config } from "./config.ts";


export function clientIp(c: Context<AppEnv>): string {
  return c.req.header("CF-Connecting-IP") ?? c.req.header("X-Real-IP") ?? "unknown";
}

const limiter = (env: Env, bucket: string) => env.RATE_LIMITER.getByName(bucket) as unknown as DurableObjectStub<RateLimiter>;

/** A busy bucket's request: from slots this isolate holds for it, or a new lease from its RateLimiter. */
function takeLeased(env: Env, bucket: string, limit: number): Promise<RateLimitDecision> {
  return permitPool(bucket).acquire(limit, async (req) => (await limiter(env, bucket).lease(req)) as RateLimitDecision);
}

/** A request without a valid key: one round trip (such requests are rare and their buckets many). */
async function takeForIp(env: Env, ip: string, limit: number): Promise<RateLimitDecision> {
  return (await limiter(env, `ip:${ip}`).take(limit)) as RateLimitDecision;
}

export function rateLimitHeaders(d: RateLimitDecision, now = Date.now()): Record<string, string> {
  const resetIn = Math.max(0, d.resetAt - Math.floor(now / 1000));
  return {
    "X-RateLimit-Limit": String(d.limit),
    "X-RateLimit-Remaining": String(d.remaining),
    "X-RateLimit-Reset": String(d.resetAt),
    // IETF draft-ietf-httpapi-ratelimit-headers: policy (quota q per window w) and current state.
    "RateLimit-Policy": `"default";q=${d.limit};w=60`,
    RateLimit: `"default";r=${d.remaining};t=${resetIn}`,
  };
}

function refuseOver(decision: RateLimitDecision): void {
  if (decision.allowed) return;
  // Through the one error mapper, with this bucket's headers alongside Retry-After.
  const err = errors.rateLimited(decision.retryAfter);
  Object.assign(err.headers, rateLimitHeaders(decision));
  throw err;
}

/**
 * Public network callbacks (`/hooks/*`), per client IP (`HOOK_RATE_LIMIT_PER_MIN`): a bucket of
 * their own, apart from unauthenticated API requests, since a network posts from a few addresses
 * at a steady rate (hence leases, as for a busy key). Charged before the session is looked up.
 */
export function hookRateLimit(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const limit = config(c.env).rateLimits.hooksPerMinute;
    refuseOver(await timed(c, "ratelimit", () => takeLeased(c.env, `hook:${clientIp(c)}`, limit)));
    await next();
  };
}

/**
 * Charges the request to the caller's bucket: the API key when auth resolved one, else the client IP
 * (so keys cannot be guessed at speed). Runs before the 401 is raised so that 401s carry the headers too.
 */
export function rateLimit(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const auth = c.get("auth");
    const decision = await timed(c, "ratelimit", () =>
      auth ? takeLeased(c.env, `key:${auth.keyId}`, auth.limitPerMinute) : takeForIp(c.env, clientIp(c), config(c.env).rateLimits.unauthenticatedPerMinute),
    );
    refuseOver(decision);
    await next();
    const headers = rateLimitHeaders(decision);
    c.res = withHeaders(c.res, (h) => {
      for (const [name, value] of Object.entries(headers)) h.set(name, value);
    });
  };
}
