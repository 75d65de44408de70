import type { MiddlewareHandler } from "hono";
import { errors } from "./errors.ts";
import { withHeaders } from "./response-headers.ts";
import type { AppEnv } from "./types.ts";

/** Dated versions of the messaging API, oldest first; the last is the default. */
export const API_VERSIONS = ["2026-11-01"] as const;
export const LATEST_API_VERSION = API_VERSIONS[API_VERSIONS.length - 1]!;

/** `API-Version` request header (optional); the version used is echoed on the response. */
export function apiVersion(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const asked = c.req.header("API-Version");
    if (asked !== undefined && !(API_VERSIONS as readonly string[]).includes(asked.trim())) {
      throw errors.invalidRequest(`Unknown API-Version "${asked}". Supported versions: ${API_VERSIONS.join(", ")}.`, [
        { path: "header.API-Version", message: `must be one of ${API_VERSIONS.join(", ")}` },
      ]);
    }
    const version = asked?.trim() ?? LATEST_API_VERSION;
    c.set("apiVersion", version);
    await next();
    c.res = withHeaders(c.res, (h) => h.set("API-Version", version));
  };
}
