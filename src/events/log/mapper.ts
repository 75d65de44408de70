import type { events } from "../../db/schema/index.ts";
import { iso } from "../../platform/time.ts";
import type { EventDeliveryView, LoggedEventView } from "./schemas.ts";

export type EventRow = typeof events.$inferSelect;

/** A delivery as the raw query of service.ts reads it (column names). */
export interface EventDeliveryRow {
  id: string;
  webhook_id: string;
  event_id: string;
  status: EventDeliveryView["status"];
  attempts: number;
  last_status_code: number | null;
  next_attempt_at: number | null;
  updated_at: number;
}

export function toEventDeliveryView(d: EventDeliveryRow): EventDeliveryView {
  return { id: d.id, webhookId: d.webhook_id, status: d.status, attemptCount: d.attempts, lastStatusCode: d.last_status_code, nextAttemptAt: iso(d.next_attempt_at), updatedAt: iso(d.updated_at) };
}

export function toEventView(row: EventRow, deliveries: EventDeliveryView[]): LoggedEventView {
  return { id: row.id, type: row.type, sessionId: row.sessionId, createdAt: iso(row.createdAt), payload: JSON.parse(row.payload) as LoggedEventView["payload"], deliveries };
}
