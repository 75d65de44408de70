import type { MiddlewareHandler } from "hono";
import { looksLikeApiKey, resolveApiKey } from "./api-keys.ts";
import { errors } from "./errors.ts";
import { timed } from "./server-timing.ts";
import { directoryDb, rememberAccountShard } from "./shards.ts";
import type { AppEnv } from "./types.ts";

/** `Bearer <token>`: the classes are disjoint, so a failed match cannot backtrack more than linearly. */
export const BEARER = /^Bearer\s+(\S+)\s*$/i;

/** Resolves `Authorization: Bearer <key>` to the account. Does not reject: see requireAuth. */
export function resolveAuth(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const header = c.req.header("Authorization");
    const match = header?.match(BEARER);
    if (match && looksLikeApiKey(match[1]!)) {
      const auth = await timed(c, "auth", () => resolveApiKey(directoryDb(c.env), match[1]!));
      if (auth) {
        rememberAccountShard(auth.accountId, auth.shard);
        c.set("auth", auth);
      }
    }
    await next();
  };
}

/** Rejects requests without a valid key, after rate limiting has charged the client IP. */
export function requireAuth(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    if (!c.get("auth")) {
      const failure = c.get("authFailure");
      if (failure) throw errors.unauthorized(failure);
      const header = c.req.header("Authorization");
      if (!header) throw errors.unauthorized();
      if (!BEARER.test(header)) throw errors.unauthorized("The Authorization header must be `Bearer <API_KEY>`.");
      throw errors.unauthorized("This API key is not valid: it is unknown or has been revoked.");
    }
    await next();
  };
}
