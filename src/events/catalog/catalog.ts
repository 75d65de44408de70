import { z } from "@hono/zod-openapi";
import type { EventCatalogEntry, ProductEventType } from "../types.ts";
import { OPERATIONAL_EVENT_ENTRIES } from "../operational.ts";
import { TEST_EVENT_TYPE } from "../types.ts";

export type { EventCatalogEntry } from "../types.ts";

/**
 * What a receiver may know about one event type: what it means, the schema of its `data`, and an
 * example delivery body. The products that emit events (messaging) describe their own types; the
 * entry points put the catalog together (src/app.ts), so this module names no product.
 */
/** The product-specific part: one entry per event type it emits (the compiler checks none is missing). */
export type EventTypeDescriptions = { [T in ProductEventType]: Omit<EventCatalogEntry, "type"> };

/** The events module's own type. */
export const TEST_EVENT_ENTRY: EventCatalogEntry = {
  type: TEST_EVENT_TYPE,
  description: "Sent only by `POST /api/webhooks/{id}/test`, to check that an endpoint receives and verifies signed deliveries. Never retried.",
  data: z.object({ webhookId: z.string(), message: z.string() }),
  example: { webhookId: "wh_0mh8k2x1qa1b2c3d4e5f6", message: "This is a test delivery. Verify its signature with your webhook secret." },
};

/** The catalog: every event type, in the order given. */
export function eventCatalog(described: EventTypeDescriptions): EventCatalogEntry[] {
  const types = Object.keys(described) as ProductEventType[];
  return [...types.map((type) => ({ type, ...described[type] })), ...OPERATIONAL_EVENT_ENTRIES, TEST_EVENT_ENTRY];
}

/** The delivery body of `entry`'s type: Standard Webhooks' `{type, timestamp, data}`. */
export function envelopeOf(entry: EventCatalogEntry) {
  return z.object({
    type: z.literal(entry.type),
    timestamp: z.string().openapi({ description: "When the change happened (ISO 8601)." }),
    data: entry.data,
  });
}
