import type { webhookDeliveries } from "../db/schema/index.ts";

/**
 * A delivery whose first attempt, made by the events consumer, succeeded has no row of its own: its
 * outcome is one entry of its event row's `delivered` JSON (src/events/first-attempts.ts). Most
 * deliveries end so, and an event row is written anyway, so a message costs no delivery rows.
 * Such a delivery still has an id, derived from its event and webhook (`dlv_` + the event id's
 * 21 characters + the webhook id's), so the delivery log, GET /api/events and a manual retry find
 * it; for one webhook these ids sort as their events do. A retry turns it into a row (`webhooks/service.ts`).
 */
export interface FoldedDelivery {
  id: string;
  /** The webhook. */
  w: string;
  /** The receiver's status code. */
  c: number | null;
  /** How long the attempt took (ms). */
  d: number;
  /** When it was recorded (ms since the epoch). */
  t: number;
}

type DeliveryRow = typeof webhookDeliveries.$inferSelect;

const ID_CHARS = 21;
const suffixOf = (id: string) => id.slice(id.indexOf("_") + 1);

export function foldedId(eventId: string, webhookId: string): string {
  return `dlv_${suffixOf(eventId)}${suffixOf(webhookId)}`;
}

/** The event a folded delivery id names (null: not such an id). */
export function eventOfFoldedId(id: string): string | null {
  return id.startsWith("dlv_") && id.length > 4 + ID_CHARS && /^[0-9a-z]+$/.test(id.slice(4)) ? `evt_${id.slice(4, 4 + ID_CHARS)}` : null;
}

/** The entries of an event row's `delivered` (malformed JSON reads as none). */
export function foldedOf(delivered: string | null): FoldedDelivery[] {
  if (!delivered) return [];
  try {
    const list = JSON.parse(delivered) as unknown;
    return Array.isArray(list) ? list.filter((f): f is FoldedDelivery => typeof f?.id === "string" && typeof f?.w === "string" && Number.isFinite(f?.t)) : [];
  } catch {
    return [];
  }
}

/** A folded delivery as the row it would have been. */
export function foldedRow(event: { id: string; accountId: string; type: string }, f: FoldedDelivery): DeliveryRow {
  return {
    id: f.id,
    accountId: event.accountId,
    webhookId: f.w,
    eventId: event.id,
    eventType: event.type,
    status: "succeeded",
    attempts: 1,
    nextAttemptAt: null,
    queuedAt: null,
    leaseUntil: null,
    slotAt: null,
    lastStatusCode: f.c,
    lastError: null,
    lastDurationMs: f.d,
    createdAt: f.t,
    updatedAt: f.t,
  };
}
