import { sql } from "drizzle-orm";
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { accountId, accountRow, counter, createdAt, timestamps } from "./columns.ts";

/**
 * Every published event, written before the request that caused it answers (src/events/emit.ts).
 * The queue message carries only the id, so D1 is the record and queue loss is recoverable: the
 * cron re-enqueues events that were never fanned out.
 */
export const events = sqliteTable(
  "events",
  {
    ...accountRow(),
    type: text("type").notNull(),
    sessionId: text("session_id"),
    /** The exact delivery body `{type, timestamp, data}` as JSON: signed and sent byte for byte. */
    payload: text("payload").notNull(),
    createdAt: createdAt(),
    /** Set once the consumer has created a delivery for every matching webhook. */
    fannedOutAt: integer("fanned_out_at"),
    /** How often the cron had to put this event back on the queue (bounded, against poison events). */
    requeues: counter("requeues"),
    /** The events consumer fanning it out holds it until then (src/events/first-attempts.ts); null = nobody. */
    fanoutLeaseUntil: integer("fanout_lease_until"),
    /**
     * The deliveries its fan-out made at once and that succeeded, as a JSON array of
     * `{id, w: webhook, c: status code, d: ms, t: when}`: such a delivery has no row of its own
     * (src/events/folded.ts); null = none.
     */
    delivered: text("delivered"),
  },
  (t) => [
    index("events_pending_idx").on(t.fannedOutAt, t.createdAt),
    index("events_account_idx").on(t.accountId, t.createdAt),
    // GET /api/events pages newest first by id (ids are time-ordered): one index per filter it serves
    // (src/events/log/query.ts); type and session together use the session one and filter the type.
    index("events_account_id_idx").on(t.accountId, t.id),
    index("events_account_type_idx").on(t.accountId, t.type, t.id),
    index("events_account_session_idx").on(t.accountId, t.sessionId, t.id),
    // the delivery log and GET /api/events?delivery=succeeded read the successes folded on event rows
    index("events_account_delivered_idx").on(t.accountId, t.id).where(sql`delivered IS NOT NULL`),
  ],
);

export const webhooks = sqliteTable(
  "webhooks",
  {
    ...accountRow(),
    url: text("url").notNull(),
    description: text("description"),
    /** JSON array of event types, or `["*"]`. */
    events: text("events", { mode: "json" }).$type<string[]>().notNull(),
    /** Only events of this messaging session, when set. */
    sessionId: text("session_id"),
    enabled: integer("enabled", { mode: "boolean" }).notNull(),
    /** Why the platform disabled it: `gone` (410) or `failing` (continuous failures); null otherwise. */
    disabledReason: text("disabled_reason", { enum: ["gone", "failing"] }),
    /** Stored in clear because every delivery must be signed with it (HMAC needs the key itself). */
    secret: text("secret").notNull(),
    /** The secret replaced by the last rotation, still signed with until `previousSecretExpiresAt`. */
    previousSecret: text("previous_secret"),
    previousSecretExpiresAt: integer("previous_secret_expires_at"),
    /** Start of the current run of failed attempts; null after any success. */
    failingSince: integer("failing_since"),
    /** Most delivery attempts per second to this endpoint (src/events/throttle.ts); null = unthrottled. */
    maxPerSecond: integer("max_per_second"),
    ...timestamps(),
  },
  (t) => [index("webhooks_account_idx").on(t.accountId, t.enabled)],
);

export const webhookDeliveries = sqliteTable(
  "webhook_deliveries",
  {
    ...accountRow(),
    webhookId: text("webhook_id").notNull(),
    eventId: text("event_id").notNull(),
    eventType: text("event_type").notNull(),
    status: text("status", { enum: ["pending", "succeeded", "failed"] }).notNull(),
    /** Attempts made so far. */
    attempts: counter("attempts"),
    /** When the next attempt is due (pending only). */
    nextAttemptAt: integer("next_attempt_at"),
    /** When a queue message was sent for the current `nextAttemptAt`; null = the cron must enqueue it. */
    queuedAt: integer("queued_at"),
    /** An attempt in flight holds the delivery until then, so duplicate queue messages do not double-send. */
    leaseUntil: integer("lease_until"),
    /** The send slot its endpoint's throttle granted the next attempt (then also `nextAttemptAt`); null = none held. */
    slotAt: integer("slot_at"),
    lastStatusCode: integer("last_status_code"),
    lastError: text("last_error"),
    /** How long the last attempt took. A success keeps its outcome here only (no `webhook_attempts` row). */
    lastDurationMs: integer("last_duration_ms"),
    ...timestamps(),
  },
  (t) => [
    uniqueIndex("deliveries_event_webhook_uq").on(t.eventId, t.webhookId),
    index("deliveries_webhook_idx").on(t.webhookId, t.id),
    index("deliveries_due_idx").on(t.status, t.nextAttemptAt),
    // recover: one webhook's failed deliveries of events since a time, oldest event first
    index("deliveries_webhook_status_idx").on(t.webhookId, t.status, t.eventId),
    // GET /api/events?delivery=: the account's events with a delivery in that state, newest first
    index("deliveries_account_status_event_idx").on(t.accountId, t.status, t.eventId),
  ],
);

export const webhookAttempts = sqliteTable(
  "webhook_attempts",
  {
    id: text("id").primaryKey(),
    deliveryId: text("delivery_id").notNull(),
    accountId: accountId(),
    attempt: integer("attempt").notNull(),
    /** Receiver's HTTP status; null on timeout or network error. */
    statusCode: integer("status_code"),
    durationMs: integer("duration_ms").notNull(),
    error: text("error"),
    /** First bytes of the receiver's answer, for debugging. */
    responseBody: text("response_body"),
    /** When the following attempt is scheduled; null if none. */
    nextAttemptAt: integer("next_attempt_at"),
    createdAt: createdAt(),
  },
  (t) => [index("attempts_delivery_idx").on(t.deliveryId, t.attempt)],
);
