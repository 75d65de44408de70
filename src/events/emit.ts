import { sql } from "drizzle-orm";
import type { SQLiteColumn, SQLiteTable } from "drizzle-orm/sqlite-core";
import type { BatchItem } from "drizzle-orm/batch";
import { events } from "../db/schema/index.ts";
import { buildEvent, type EmitInput } from "./event-record.ts";
import type { DomainEvent, EventRecord, EventsQueueMessage } from "./types.ts";
import { chunk, sendAll } from "../platform/batching.ts";
import { EVENTS_PER_MESSAGE, queueGroups } from "./queue-groups.ts";
import { log } from "../platform/log.ts";
import { itemsPerStatement, jsonColumns, jsonParts } from "../platform/d1.ts";
import { accountShard, type Shard } from "../platform/shards.ts";

export type { EmitInput, EventOrder } from "./event-record.ts";
export { eventRecord } from "./event-record.ts";

/** Throws the 413 `event_too_large` now if this event could not be recorded later. */
export function assertEventFits(input: EmitInput): void {
  buildEvent(input, Date.now());
}

/** Rows per INSERT: 8 columns each. */
const ROWS_PER_INSERT = itemsPerStatement(8);

/** Events ready to be recorded: the D1 statements that record them, and what to do once they are. */
export interface PreparedEvents {
  events: DomainEvent[];
  /** INSERTs of the event rows (none for no events). Run them in the caller's `db.batch`. */
  statements: BatchItem<"sqlite">[];
  /** Puts the events on the queue; call after the statements committed. Never throws. */
  enqueue(): Promise<boolean>;
}

/**
 * Builds the events and their D1 INSERTs without running them, so a caller can record its own
 * change and its events in ONE `db.batch`: one round trip, and atomic (never an event without the
 * change it announces, nor the change without its event).
 */
export function prepareEvents(env: Env, shard: Shard, input: EmitInput | EmitInput[]): PreparedEvents {
  const inputs = Array.isArray(input) ? input : [input];
  const now = Date.now();
  const out: DomainEvent[] = [];
  const rows: (typeof events.$inferInsert)[] = [];
  for (const i of inputs) {
    const { event, payload } = buildEvent(i, now);
    out.push(event);
    rows.push({ id: event.id, accountId: event.accountId, type: event.type, sessionId: event.sessionId, payload, createdAt: now, fannedOutAt: null, requeues: 0 });
  }
  const db = shard.db;
  const statements: BatchItem<"sqlite">[] = [];
  for (let i = 0; i < rows.length; i += ROWS_PER_INSERT) statements.push(db.insert(events).values(rows.slice(i, i + ROWS_PER_INSERT)));
  const ids = out.map((e) => e.id);
  return { events: out, statements, enqueue: () => (ids.length ? enqueueEvents(env, shard, ids) : Promise.resolve(true)) };
}

/**
 * One event that announces the statement just before it in the same `db.batch`: its INSERT only
 * takes effect if that statement changed a row (SQLite `changes()`), e.g. an
 * `INSERT ... ON CONFLICT DO NOTHING` that did insert. So a deduplicated write and its event go in
 * one round trip; the caller enqueues the event only once it knows the write happened.
 */
export function prepareEventAfterChange(shard: Shard, input: EmitInput): { event: DomainEvent; statement: BatchItem<"sqlite"> } {
  const now = Date.now();
  const { event, payload } = buildEvent(input, now);
  // Columns in the table's order (drizzle names them all): id, account_id, type, session_id, payload, created_at, fanned_out_at, requeues, fanout_lease_until, delivered.
  const statement = shard.db
    .insert(events)
    .select(sql`select ${event.id}, ${event.accountId}, ${event.type}, ${event.sessionId}, ${payload}, ${now}, null, 0, null, null where changes() = 1`);
  return { event, statement };
}

const EVENT = jsonColumns(events);

/**
 * Event records as rows, in one statement per JSON part whatever their number; an event already
 * recorded (a replayed commit) is left alone.
 */
export function insertRecordsStatements(shard: Shard, records: EventRecord[]): BatchItem<"sqlite">[] {
  return jsonParts(records.map((e) => EVENT.rowJson({ ...e, requeues: 0 }))).map((part) =>
    shard.db.insert(events).select(sql`SELECT ${EVENT.extracts} FROM json_each(${part}) AS j WHERE true`).onConflictDoNothing(),
  );
}

/**
 * Many events, each announcing a row that a statement before it in the same `db.batch` may have
 * inserted (`INSERT ... ON CONFLICT DO NOTHING`): an event is recorded only if the row `causeId`
 * names exists in `cause` then. Each cause id is new, so it exists only if that statement inserted
 * it. One statement per JSON part, whatever the number of events (the batched form of
 * `prepareEventAfterChange`).
 */
export function prepareEventsIfInserted(shard: Shard, items: { record: EventRecord; causeId: string }[], cause: { table: SQLiteTable; id: SQLiteColumn }): BatchItem<"sqlite">[] {
  const json = items.map(({ record, causeId }) => ({ ...EVENT.rowJson({ ...record, requeues: 0 }), cause_id: causeId }));
  return jsonParts(json).map((part) =>
    shard.db.insert(events).select(sql`SELECT ${EVENT.extracts} FROM json_each(${part}) AS j WHERE EXISTS (SELECT 1 FROM ${cause.table} WHERE ${cause.id} = json_extract(j.value, '$.cause_id'))`).onConflictDoNothing(),
  );
}

/**
 * The one way to publish a domain event. Awaited by the caller: when it resolves, the event is
 * recorded in D1 (the durable record) and, normally, already on the events queue. If the queue
 * send fails the event is still recorded and the every-minute cron enqueues it, so nothing is
 * lost; if the D1 write fails this throws and the request fails rather than answer without it.
 * To record events together with the change they announce, use `prepareEvents`.
 */
export async function emit(env: Env, input: EmitInput | EmitInput[]): Promise<DomainEvent[]> {
  const inputs = Array.isArray(input) ? input : [input];
  // Each account's events go to its shard, one batch per shard.
  const byShard = new Map<number, { shard: Shard; inputs: EmitInput[] }>();
  for (const i of inputs) {
    const shard = await accountShard(env, i.accountId);
    const group = byShard.get(shard.index) ?? { shard, inputs: [] };
    group.inputs.push(i);
    byShard.set(shard.index, group);
  }
  const out: DomainEvent[] = [];
  for (const { shard, inputs: part } of byShard.values()) {
    const prepared = prepareEvents(env, shard, part);
    await shard.db.batch(prepared.statements as [BatchItem<"sqlite">, ...BatchItem<"sqlite">[]]);
    await prepared.enqueue();
    out.push(...prepared.events);
  }
  return out;
}

/** Puts event ids on the events queue; a failure is logged, not thrown (the cron re-enqueues). */
export async function enqueueEvents(env: Env, shard: Pick<Shard, "index">, ids: string[]): Promise<boolean> {
  try {
    // In groups, as enqueueRecorded's (ids only: the consumer reads these records from D1).
    await sendAll(env.EVENTS_QUEUE, chunk(ids, EVENTS_PER_MESSAGE).map((part) => ({ body: { kind: "events", ids: part, shard: shard.index, carried: [] } satisfies EventsQueueMessage, contentType: "json" as const })));
    return true;
  } catch (err) {
    log.error("events queue send failed; the cron will enqueue", { count: ids.length, error: String(err) });
    return false;
  }
}

/**
 * Puts recorded events on the events queue with their content, so fan-out reads nothing back from
 * D1 for them (a large one goes by id). Call once the records are committed in D1. A failure is
 * logged, not thrown: the records are in D1 and the cron re-enqueues events never fanned out. Every
 * record is of `shard` (the message names it, as `enqueueEvents`' do).
 * They go in groups (queue-groups.ts). The callers pass one session's events (a group commit, an
 * inbound batch), so a message is one account's.
 */
export async function enqueueRecorded(env: Env, shard: Pick<Shard, "index">, records: EventRecord[]): Promise<boolean> {
  // Structured clone, not JSON: a record's payload is already JSON text, and escaping it again
  // (then parsing it back in the consumer) was a large share of the CPU a busy session costs.
  const sends = queueGroups(shard.index, records).map((batch) => batch.map((body) => ({ body, contentType: "v8" as const })));
  try {
    for (const p of sends) await env.EVENTS_QUEUE.sendBatch(p);
    return true;
  } catch (err) {
    log.error("events queue send failed; the cron will enqueue", { count: records.length, error: String(err) });
    return false;
  }
}
