import { errors } from "../platform/errors.ts";
import { newId } from "../platform/ids.ts";
import type { DomainEvent, EventPayload, EventRecord, EventType } from "./types.ts";

/** Events as they are recorded, built from typed input (no I/O, no bindings): what emit.ts and the Session DO's write buffer record. */

export interface EmitInput {
  type: EventType;
  accountId: string;
  sessionId?: string | null;
  data: Record<string, unknown>;
  /** Where it stands among its session's events (see `EventPayload`), when its session numbers them. */
  order?: EventOrder;
}

/** Serialized `{type, timestamp, data}` larger than this is refused at emit (queue and D1 row limits). */
export const MAX_EVENT_BYTES = 256 * 1024;

const encoder = new TextEncoder();

/** UTF-8 bytes of `text`, without encoding it when even 3 bytes per UTF-16 unit fit. */
function utf8Bytes(text: string, bound: number): number {
  return text.length * 3 <= bound ? text.length : encoder.encode(text).byteLength;
}

/**
 * One event and its delivered body (`{type, timestamp, data}`). Over the size bound it is a 413
 * `event_too_large`, thrown while the caller's statements are only prepared: the change and its
 * event are written together in one batch or not at all. Inputs are bounded so that this does not
 * happen; it is the last guard, not the limit clients are told about.
 */
export function buildEvent(input: EmitInput, now: number, order: EventOrder = input.order ?? {}): { event: DomainEvent; payload: string } {
  const timestamp = new Date(now).toISOString();
  const event: DomainEvent = { id: newId("evt", now), type: input.type, accountId: input.accountId, sessionId: input.sessionId ?? null, timestamp, data: input.data };
  const payload = JSON.stringify({ type: event.type, timestamp, ...order, data: event.data } satisfies EventPayload);
  const bytes = utf8Bytes(payload, MAX_EVENT_BYTES);
  if (bytes > MAX_EVENT_BYTES) throw errors.eventTooLarge(event.type, bytes, MAX_EVENT_BYTES);
  return { event, payload };
}

/** Where an event stands among its session's: see `EventPayload`. */
export type EventOrder = Pick<EventPayload, "sequence" | "statusOrdinal">;

/**
 * One event as its D1 record, built now and written later by the caller (the Session DO's group
 * commits). Throws the 413 `event_too_large` as `prepareEvents` does.
 */
export function eventRecord(input: EmitInput, now: number, order: EventOrder = {}): EventRecord {
  const { event, payload } = buildEvent(input, now, order);
  return { id: event.id, accountId: event.accountId, type: event.type, sessionId: event.sessionId, payload, createdAt: now };
}

