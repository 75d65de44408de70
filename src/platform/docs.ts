import { Hono } from "hono";
import type { AppEnv } from "./types.ts";

// The interactive reference: Swagger UI from the pinned swagger-ui-dist package, copied into the
// Worker's static assets (`public/docs/`, see scripts/docs-assets.ts) and served from this origin.
const PAGE = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>API reference</title>
<link rel="stylesheet" href="/docs/vendor/swagger-ui.css"></head>
<body>
<div id="swagger-ui"></div>
<script src="/docs/vendor/swagger-ui-bundle.js"></script>
<script src="/docs/init.js"></script>
</body>
</html>`;

/**
 * Same origin only; no inline script. Swagger UI sets style attributes and inlines SVG icons as
 * data: URLs, hence those two allowances.
 */
export const DOCS_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join("; ");

/** /docs: the viewer page and its static files (outside the OpenAPI document). */
export const docsRoutes = new Hono<AppEnv>()
  .get("/docs", (c) => {
    c.header("Content-Security-Policy", DOCS_CSP);
    c.header("X-Content-Type-Options", "nosniff");
    c.header("Referrer-Policy", "no-referrer");
    return c.html(PAGE);
  })
  // The viewer's files (static assets); anything else under /docs is the usual JSON 404.
  .get("/docs/*", async (c, next) => {
    const res = await c.env.ASSETS.fetch(c.req.raw);
    if (res.status === 404) return next();
    const out = new Response(res.body, res);
    out.headers.set("X-Content-Type-Options", "nosniff");
    return out;
  });
