import { QUEUE_BATCH_MAX } from "../platform/batching.ts";
import type { EventRecord, EventsQueueMessage } from "./types.ts";

/** A queue message carries an event's record only up to this (a queue message is at most 128 KB). */
const MAX_QUEUED_CONTENT = 48 * 1024;
/** Bytes of records one queue message carries (V8's serialization: a character a byte in Latin-1 strings, two in others). */
const MESSAGE_BYTES = 96 * 1024;
/** Events one queue message names: a fan-out part (consumers.ts) takes whole messages. */
export const EVENTS_PER_MESSAGE = QUEUE_BATCH_MAX;
/** Bytes per `sendBatch` (the queue takes at most 256 KB in one). */
const QUEUE_BATCH_BYTES = 200 * 1024;

/** Any character beyond Latin-1: V8 then keeps (and serializes) the string two bytes a character. */
const TWO_BYTE = /[^\u0000-\u00ff]/;
/** What a record costs a queue message when carried: its fields' serialized size, with room for their tags. */
const carriedSize = (r: EventRecord) => (TWO_BYTE.test(r.payload) ? 2 : 1) * r.payload.length + 2 * (r.id.length + r.accountId.length + (r.sessionId?.length ?? 0) + r.type.length) + 128;

/**
 * One session's recorded events as events-queue messages, grouped by `sendBatch`: up to
 * EVENTS_PER_MESSAGE a message, in order, each carrying the records that fit (a larger one goes by
 * id, in its place), every message and every batch within the queue's size limits. A queue's cost
 * and its throughput limit are per message: a busy session's events (three per message sent) would
 * otherwise be that many messages, each serialized, stored, delivered and acked on its own.
 */
export function queueGroups(shard: number, records: readonly EventRecord[]): EventsQueueMessage[][] {
  const messages: { body: EventsQueueMessage; bytes: number }[] = [];
  let ids: string[] = [];
  let carried: EventRecord[] = [];
  let bytes = 0;
  const close = () => {
    if (ids.length > 0) messages.push({ body: { kind: "events", ids, shard, carried }, bytes: bytes + 64 });
    ids = [];
    carried = [];
    bytes = 0;
  };
  for (const r of records) {
    const size = carriedSize(r);
    const carry = size <= MAX_QUEUED_CONTENT;
    const cost = carry ? size : 2 * r.id.length + 16;
    if (ids.length === EVENTS_PER_MESSAGE || bytes + cost > MESSAGE_BYTES) close();
    ids.push(r.id);
    if (carry) carried.push(r);
    bytes += cost;
  }
  close();
  const batches: EventsQueueMessage[][] = [];
  let batch: EventsQueueMessage[] = [];
  let batchBytes = 0;
  for (const m of messages) {
    if (batch.length === QUEUE_BATCH_MAX || (batch.length > 0 && batchBytes + m.bytes > QUEUE_BATCH_BYTES)) {
      batches.push(batch);
      batch = [];
      batchBytes = 0;
    }
    batch.push(m.body);
    batchBytes += m.bytes;
  }
  if (batch.length > 0) batches.push(batch);
  return batches;
}
