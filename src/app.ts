import { assetRoutes, compileRoutes } from "./compile/index.ts";
import { envelopeOf, eventCatalog, eventTypeRoutes, STREAM_PATH, streamRoutes, streamTicketAuth, webhookRoutes, eventLogRoutes } from "./events/index.ts";
import { MESSAGING_EVENT_TYPES } from "./messaging/event-catalog.ts";
import { campaignRoutes } from "./messaging/campaigns/index.ts";
import { messagingHookRoutes, messagingRoutes } from "./messaging/index.ts";
import { accountRoutes } from "./platform/accounts/router.ts";
import { apiVersion } from "./platform/api-version.ts";
import { requireAuth, resolveAuth } from "./platform/auth.ts";
import { bodyGuard } from "./platform/body-guard.ts";
import { consoleOr } from "./platform/console.ts";
import { docsRoutes } from "./platform/docs.ts";
import { handleError } from "./platform/error-handler.ts";
import { VERSION, healthRoutes } from "./platform/health.ts";
import { notFoundOrMethodNotAllowed } from "./platform/not-found.ts";
import { createRouter } from "./platform/openapi.ts";
import { hookRateLimit, rateLimit } from "./platform/rate-limit.ts";
import { requestContext } from "./platform/request-context.ts";

/**
 * The whole HTTP surface, built once for the Worker and for tests. Order matters: request id and
 * log first; then, for the API, auth resolution, rate limiting (per key, or per IP before a 401),
 * the 401 itself, versioning and body checks; routes last.
 */
export function createApp() {
  const app = createRouter();
  app.use("*", requestContext());
  app.onError(handleError);
  // Unknown API paths: JSON 404/405; any other GET is the browser console (a single-page app).
  app.notFound(consoleOr(notFoundOrMethodNotAllowed(() => app.routes)));

  // Before the API's key auth: a browser's WebSocket carries a single-use ticket instead of a key.
  app.use(STREAM_PATH, streamTicketAuth());
  for (const prefix of ["/api/*", "/v1/*"]) {
    app.use(prefix, resolveAuth(), rateLimit(), requireAuth(), bodyGuard());
  }
  app.use("/api/*", apiVersion());
  app.use("/hooks/*", hookRateLimit(), bodyGuard());

  app.route("/", healthRoutes);
  app.route("/", accountRoutes);
  app.route("/", compileRoutes);
  app.route("/", assetRoutes);
  app.route("/", messagingRoutes);
  app.route("/", campaignRoutes);
  app.route("/", webhookRoutes);
  const catalog = eventCatalog(MESSAGING_EVENT_TYPES);
  app.route("/", eventTypeRoutes(catalog));
  app.route("/", streamRoutes);
  // after the stream: /api/events/stream must not be read as an event id
  app.route("/", eventLogRoutes);
  app.route("/", messagingHookRoutes);

  // every event type's delivery body, as OpenAPI 3.1 `webhooks` (what /docs shows receivers)
  for (const e of catalog) {
    app.openAPIRegistry.registerWebhook({
      method: "post",
      path: e.type,
      summary: e.description,
      tags: ["Events"],
      request: { body: { content: { "application/json": { schema: envelopeOf(e) } } } },
      responses: { 200: { description: "Any 2xx acknowledges the delivery; anything else is retried." } },
    });
  }
  app.openAPIRegistry.registerComponent("securitySchemes", "bearerAuth", {
    type: "http",
    scheme: "bearer",
    description: "An API key: `Authorization: Bearer tmk_…` (create one with `npm run keys -- create`).",
  });
  app.doc31("/openapi.json", {
    openapi: "3.1.0",
    info: {
      title: "TeX & Messaging Edge API",
      version: VERSION,
      description:
        "LaTeX to PDF compilation (`/v1/compile`) and a WhatsApp-style messaging gateway (`/api`). Errors share one body: `{\"error\": {\"code\", \"message\", ...}}`. Every authenticated response carries `X-RateLimit-*`, `RateLimit-Policy` and `RateLimit` headers.",
    },
    security: [{ bearerAuth: [] }],
  });
  app.route("/", docsRoutes);
  return app;
}

export type App = ReturnType<typeof createApp>;
