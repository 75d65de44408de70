import { createRoute, z } from "@hono/zod-openapi";
import pkg from "../../package.json";
import { createRouter, jsonResponse } from "./openapi.ts";

export const VERSION: string = pkg.version;

const health = createRoute({
  method: "get",
  path: "/health",
  tags: ["Platform"],
  summary: "Liveness check (no API key needed)",
  security: [],
  responses: { 200: jsonResponse(z.object({ status: z.literal("ok"), version: z.string() }).openapi("Health"), "The API is up") },
});

export const healthRoutes = createRouter().openapi(health, (c) => c.json({ status: "ok" as const, version: VERSION }, 200));
