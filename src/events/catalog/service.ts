import { z } from "@hono/zod-openapi";
import { envelopeOf, type EventCatalogEntry } from "./catalog.ts";

/** An example's timestamp: fixed, so the catalog is the same on every call. */
const EXAMPLE_TIME = "2026-01-15T09:30:00.000Z";

/** The catalog as `GET /api/event-types` answers it (built once per catalog: it never changes). */
export function catalogView(entries: readonly EventCatalogEntry[]) {
  return {
    data: entries.map((e) => ({
      type: e.type,
      description: e.description,
      schema: z.toJSONSchema(envelopeOf(e), { target: "draft-2020-12", unrepresentable: "any" }) as Record<string, unknown>,
      example: { type: e.type, timestamp: EXAMPLE_TIME, data: e.example },
    })),
  };
}
