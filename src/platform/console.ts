import type { Context } from "hono";
import type { AppEnv } from "./types.ts";

/**
 * The browser console (dashboard/, built by scripts/dashboard-build.ts into the Worker's static
 * assets): `/` and every other non-API path answer the single-page app, so its client-side routes
 * survive a reload. API prefixes never fall back to it: an unknown `/api`, `/v1`, `/hooks` or `/docs`
 * path keeps its JSON 404/405.
 */
const API_PREFIXES = ["/api", "/v1", "/hooks", "/docs", "/openapi.json", "/health", "/cdn-cgi"];

/** Hashed, immutable build output; a missing one is a 404, never the page (a script that is HTML breaks). */
const BUILD_DIR = "/assets/";

/**
 * Same origin only, no inline script or style, no eval. `blob:` images and workers: PDF.js renders
 * pages through them; `connect-src 'self'` covers the same-origin WebSocket of the event stream.
 * `blob:` images and media: a chat's files are fetched with the API key and shown by object URLs.
 */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: blob:",
  "media-src blob:",
  "font-src 'self'",
  "connect-src 'self'",
  "worker-src 'self'",
  "manifest-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

export function isApiPath(path: string): boolean {
  return API_PREFIXES.some((p) => path === p || path.startsWith(p + "/"));
}

/** Wraps the JSON not-found handler: GET/HEAD of a non-API path gets the console (a file, else the page). */
export function consoleOr(notFound: (c: Context<AppEnv>) => Response | Promise<Response>) {
  return async (c: Context<AppEnv>): Promise<Response> => {
    const method = c.req.method;
    if ((method !== "GET" && method !== "HEAD") || isApiPath(c.req.path)) return notFound(c);
    let res = await c.env.ASSETS.fetch(c.req.raw);
    if (res.status === 404 && !c.req.path.startsWith(BUILD_DIR)) {
      res = await c.env.ASSETS.fetch(new Request(new URL("/", c.req.url), { method, headers: c.req.raw.headers }));
    }
    if (res.status === 404) return notFound(c);
    const out = new Response(res.body, res);
    out.headers.set("Content-Security-Policy", CONSOLE_CSP);
    out.headers.set("X-Content-Type-Options", "nosniff");
    out.headers.set("Referrer-Policy", "no-referrer");
    out.headers.set("Cache-Control", c.req.path.startsWith(BUILD_DIR) && res.status === 200 ? "public, max-age=31536000, immutable" : "no-cache");
    return out;
  };
}
