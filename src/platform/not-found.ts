import type { Context } from "hono";
import { errorResponse } from "./error-handler.ts";
import { errors } from "./errors.ts";
import type { AppEnv } from "./types.ts";

export function patternToRegExp(path: string): RegExp {
  const source = path
    .split("/")
    .map((seg) => (seg.startsWith(":") ? "[^/]+" : seg === "*" ? ".*" : seg.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")))
    .join("/");
  return new RegExp(`^${source}/?$`);
}

/** 404 for unknown routes, 405 (with `Allow`) when the path exists under another method. */
export function notFoundOrMethodNotAllowed(routes: () => { method: string; path: string }[]) {
  let compiled: { method: string; re: RegExp }[] | undefined;
  return (c: Context<AppEnv>) => {
    compiled ??= routes()
      .filter((r) => r.method !== "ALL")
      .map((r) => ({ method: r.method, re: patternToRegExp(r.path) }));
    const allow = [...new Set(compiled.filter((r) => r.re.test(c.req.path)).map((r) => r.method))];
    if (allow.length > 0 && !allow.includes(c.req.method)) return errorResponse(c, errors.methodNotAllowed(allow));
    return errorResponse(c, errors.notFound("route"));
  };
}
