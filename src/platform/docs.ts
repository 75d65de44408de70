import type { Hono } from "hono";
import type { AppEnv } from "./types.ts";

// The interactive reference is Scalar's standalone bundle rendering /openapi.json in the browser.
const PAGE = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>API reference</title></head>
<body>
<script id="api-reference" data-url="/openapi.json"></script>
<script src="https://cdn.jsdelivr.net/npm/@scalar/api-reference"></script>
</body>
</html>`;

export function mountDocs(app: Hono<AppEnv>): void {
  app.get("/docs", (c) => c.html(PAGE));
}
