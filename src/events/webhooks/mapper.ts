import type { webhookAttempts, webhookDeliveries, webhooks } from "../../db/schema/index.ts";
import { iso } from "../../platform/time.ts";
import type { DeliveryView, WebhookView } from "./schemas.ts";

export type WebhookRow = typeof webhooks.$inferSelect;
export type DeliveryRow = typeof webhookDeliveries.$inferSelect;
export type AttemptRow = typeof webhookAttempts.$inferSelect;

export function toWebhookView(row: WebhookRow, now = Date.now()): WebhookView {
  return {
    id: row.id,
    url: row.url,
    events: row.events as WebhookView["events"],
    description: row.description,
    sessionId: row.sessionId,
    enabled: row.enabled,
    maxPerSecond: row.maxPerSecond,
    disabledReason: row.disabledReason,
    previousSecretExpiresAt: row.previousSecret && (row.previousSecretExpiresAt ?? 0) > now ? iso(row.previousSecretExpiresAt) : null,
    createdAt: iso(row.createdAt)!,
    updatedAt: iso(row.updatedAt)!,
  };
}

export function toDeliveryView(row: DeliveryRow, attempts: AttemptRow[]): DeliveryView {
  return {
    id: row.id,
    webhookId: row.webhookId,
    eventId: row.eventId,
    eventType: row.eventType,
    status: row.status,
    attemptCount: row.attempts,
    nextAttemptAt: iso(row.nextAttemptAt),
    lastStatusCode: row.lastStatusCode,
    lastError: row.lastError,
    attempts: [
      ...attempts.map((a) => ({ attempt: a.attempt, statusCode: a.statusCode, durationMs: a.durationMs, error: a.error, responseBody: a.responseBody, nextAttemptAt: iso(a.nextAttemptAt), createdAt: iso(a.createdAt)! })),
      ...successOf(row, attempts),
    ],
    createdAt: iso(row.createdAt)!,
    updatedAt: iso(row.updatedAt)!,
  };
}

/**
 * A successful attempt has no `webhook_attempts` row (events/attempt-writes.ts): the delivery row
 * keeps its outcome, shown here as the last attempt (its answer's body is not kept).
 */
function successOf(row: DeliveryRow, attempts: AttemptRow[]) {
  if (row.status !== "succeeded" || row.attempts === 0 || attempts.some((a) => a.attempt === row.attempts)) return [];
  return [{ attempt: row.attempts, statusCode: row.lastStatusCode, durationMs: row.lastDurationMs ?? 0, error: row.lastError, responseBody: null, nextAttemptAt: null, createdAt: iso(row.updatedAt)! }];
}
