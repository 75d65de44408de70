import type { z } from "@hono/zod-openapi";

/** The products' event types of docs/contracts.md §4 (webhook.test is only sent by POST /api/webhooks/:id/test). */
export const PRODUCT_EVENT_TYPES = [
  "message.received",
  "message.sent",
  "message.delivered",
  "message.read",
  "message.media_stored",
  "message.media_failed",
  "message.edited",
  "message.deleted",
  "session.connected",
  "session.disconnected",
  "session.restricted",
  "session.updated",
  "contact.created",
  "contact.identity_changed",
  "call.started",
  "call.ended",
  "campaign.completed",
  "template.updated",
] as const;

/** What the webhook pipeline itself tells an account about its endpoints (src/events/operational.ts). */
export const OPERATIONAL_EVENT_TYPES = ["webhook.disabled", "webhook.delivery_exhausted"] as const;

export const EVENT_TYPES = [...PRODUCT_EVENT_TYPES, ...OPERATIONAL_EVENT_TYPES] as const;

export type ProductEventType = (typeof PRODUCT_EVENT_TYPES)[number];
export type OperationalEventType = (typeof OPERATIONAL_EVENT_TYPES)[number];
export type EventType = (typeof EVENT_TYPES)[number];

/** What travels on the events queue. `data` is the full resource as the REST API returns it. */
export interface DomainEvent {
  id: string;
  type: EventType;
  accountId: string;
  /** Messaging session the event belongs to, for webhook session filters. */
  sessionId: string | null;
  /** ISO 8601 */
  timestamp: string;
  data: Record<string, unknown>;
}

/** Only `POST /api/webhooks/:id/test` sends it. */
export const TEST_EVENT_TYPE = "webhook.test";

/** The delivery body (docs/contracts.md §4). */
export interface EventPayload {
  type: EventType | typeof TEST_EVENT_TYPE;
  timestamp: string;
  /**
   * Events of a messaging session recorded by its Durable Object: strictly increasing per session,
   * in the order the session recorded the changes (receivers drop what is older than they have seen).
   */
  sequence?: number;
  /** Message status events: the status's place in sent (1) < delivered (2) < read (3). */
  statusOrdinal?: number;
  data: Record<string, unknown>;
}

/** An event as recorded in D1 (its `events` row without the bookkeeping columns). */
export interface EventRecord {
  id: string;
  accountId: string;
  type: EventType;
  sessionId: string | null;
  /** The delivery body, byte for byte. */
  payload: string;
  createdAt: number;
}

/**
 * D1 holds the records. A message names one event (`kind: "event"`) or a group of one session's
 * events (`kind: "events"`, in order), and may carry the recorded events themselves (`event`,
 * `carried`: those small enough for the queue's 128 KB), so fan-out needs no D1 read for them; the
 * others go by id. `shard` is the shard database holding the rows (platform/shards.ts); a message
 * without one (queued before shards) is shard 0's. `requeues`: how many times a failed fan-out put it
 * back (events consumer).
 */
export type EventsQueueMessage =
  | { kind: "event"; id: string; shard?: number; event?: EventRecord; requeues?: number }
  | { kind: "events"; ids: string[]; shard: number; carried: EventRecord[]; requeues?: number };
export type DeliveryQueueMessage = { kind: "delivery"; id: string; shard?: number };

/** One event type of GET /api/event-types (src/events/catalog): the catalog and the areas that describe their events share it. */
export interface EventCatalogEntry {
  type: EventType | typeof TEST_EVENT_TYPE;
  description: string;
  /** The schema of the body's `data`: the resource as the REST API returns it. */
  data: z.ZodType;
  /** An example `data`, checked against `data` by the tests. */
  example: Record<string, unknown>;
}
