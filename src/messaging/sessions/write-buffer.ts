/**
 * The Session DO as the write buffer of its own traffic, over its SQLite storage. A send is answered
 * once its row and events are here (durable: the DO's output gate holds the answer until the
 * storage commit); the DO then writes them to D1 in group commits (`store/group-writes.ts`) and puts
 * the events on the queue with their content. Receipts of messages it knows are applied here, in
 * order, each step with its event. Synchronous and free of Worker bindings, so it is unit tested
 * over any SqlStorage, as the outbox is.
 *
 * Tables: `wb_messages` the session's recent messages as the DO knows them (`dirty`: DIRTY changed
 * since D1 last had them, OPEN clean and still expecting receipts, DONE clean and final; `ver` tells a
 * flush whether a row changed again meanwhile); `wb_events` events not yet committed to D1, in their
 * sequence; `wb_meta` the session's last event sequence.
 */
import { eventRecord, type EmitInput, type EventOrder } from "../../events/event-record.ts";
import type { EventRecord, EventType } from "../../events/types.ts";
import { toMessage, type MessageRow } from "../messages/mapper.ts";
import { canAdvance, deliveredStamp, statusesBetween, type MessageStatus } from "../status.ts";
import { jsonParts } from "../../platform/d1.ts";
import type { SqlLike } from "./outbox.ts";

export type Target = "sent" | "delivered" | "read" | "failed";
/** Why a send failed (the drivers' FailureReason, structurally: this file stays free of the network layer's types). */
type FailureReason = { code: string; message: string };
export type Selector = { ids: string[] } | { externalIds: string[] };

/** Clean rows kept for receipts this long after their last change; older ones are read from D1. */
const KEEP_MS = 15 * 60_000;
/** At most this many clean rows whose status is final (read, failed) are kept, for replayed receipts. */
const KEEP_DONE_ROWS = 20_000;
/**
 * At most this many clean rows still expecting receipts (sent, delivered) are kept (the oldest go
 * first). A receipt the buffer cannot apply costs a D1 round trip of its own, so under a burst the rows
 * waiting for receipts outlive those that are done: a 100,000-recipient campaign's receipts, running
 * behind its sends, stay here instead of falling to D1 one step at a time (about 1 KB of storage each).
 */
const KEEP_OPEN_ROWS = 200_000;

/** Values of `wb_messages.dirty` (one column, so one index orders both the flush and the pruning). */
const DIRTY = 1;
const OPEN = 0;
const DONE = -1;
/** The clean state a committed row takes: read, failed and received messages take no more receipts. */
const cleanState = (status: MessageStatus): number => (canAdvance(status, "read") ? OPEN : DONE);
/** Keys looked up per statement in the DO's SQLite (its bound-parameter limit is 100). */
const KEYS_PER_LOOKUP = 90;

const EVENT: Partial<Record<MessageStatus, EventType>> = { sent: "message.sent", delivered: "message.delivered", read: "message.read" };
const ORDINAL: Partial<Record<MessageStatus, number>> = { sent: 1, delivered: 2, read: 3 };

/** The order fields of a message status event numbered now (events written to D1 directly take theirs here too). */
export function statusOrder(buffer: WriteBuffer, status: "sent" | "delivered" | "read"): EventOrder {
  return { sequence: buffer.nextSequence(), statusOrdinal: ORDINAL[status]! };
}

/**
 * What a flush takes: the dirty rows (each as its stored JSON text of `MessageRow`, with its id, status
 * and version) and the uncommitted events, oldest first.
 */
export interface FlushBatch {
  messages: { id: string; status: MessageStatus; ver: number; json: string }[];
  events: EventRecord[];
  /** The sequence of the last of `events` (0: none). */
  lastSeq: number;
}

type Draft = { input: EmitInput; statusOrdinal?: number };

/**
 * `row` moved forward to `target` (null: it cannot move there), one event draft per step taken
 * pushed onto `drafts`, as `store/status.ts` does in D1. A `delivered` step passed on the way to
 * `read` is stamped `deliveredAt` when the caller knows it.
 */
function moved(row: MessageRow, target: Target, at: number, drafts: Draft[], error?: FailureReason, externalId?: string | null, deliveredAt?: number): MessageRow | null {
  if (!canAdvance(row.status, target)) return null;
  for (const step of statusesBetween(row.status, target)) {
    row = { ...row, status: step };
    if (step === "sent") row.sentAt ??= at;
    if (step === "delivered") row.deliveredAt ??= deliveredStamp(at, deliveredAt);
    if (step === "read") row.readAt ??= at;
    if (step === "failed") {
      row.errorCode = error?.code ?? "failed";
      row.errorMessage = error?.message ?? "The network could not send the message.";
    }
    if (step === "sent" && externalId) row.externalId = externalId;
    const type = EVENT[step];
    if (type) drafts.push({ input: { type, accountId: row.accountId, sessionId: row.sessionId, data: toMessage(row) }, statusOrdinal: ORDINAL[step] });
  }
  return row;
}

export interface Advanced {
  /** Rows that reached the target here. */
  changed: MessageRow[];
  /** Keys this buffer does not know (their rows are only in D1). */
  unknown: string[];
  events: EventRecord[];
}

/**
 * `rows` in the order of `keys` (SQLite answers an IN list in index order): the caller's order is a
 * bulk's, and the events of its rows are numbered in it.
 */
function inKeyOrder<T>(rows: T[], keys: readonly string[], keyOf: (row: T) => string): T[] {
  const rank = new Map(keys.map((k, i) => [k, i]));
  return rows.sort((a, b) => rank.get(keyOf(a))! - rank.get(keyOf(b))!);
}

export class WriteBuffer {
  private readonly sql: SqlLike;

  constructor(sql: SqlLike) {
    this.sql = sql;
    sql.exec("CREATE TABLE IF NOT EXISTS wb_messages (id TEXT PRIMARY KEY, external_id TEXT, row TEXT NOT NULL, dirty INTEGER NOT NULL, ver INTEGER NOT NULL, touched INTEGER NOT NULL)");
    sql.exec("CREATE INDEX IF NOT EXISTS wb_messages_external ON wb_messages (external_id) WHERE external_id IS NOT NULL");
    // One index serves the flush's order (dirty rows by touched, id) and pruning (clean rows of each state
    // by touched): every receipt rewrites these columns, so each extra index is paid for on every step of
    // every message. Rows kept clean before states existed read as OPEN (0).
    sql.exec("DROP INDEX IF EXISTS wb_messages_dirty");
    sql.exec("DROP INDEX IF EXISTS wb_messages_touched");
    sql.exec("CREATE INDEX IF NOT EXISTS wb_messages_dirty_order ON wb_messages (dirty, touched, id)");
    sql.exec("CREATE TABLE IF NOT EXISTS wb_events (seq INTEGER PRIMARY KEY, record TEXT NOT NULL)");
    sql.exec("CREATE TABLE IF NOT EXISTS wb_meta (k TEXT PRIMARY KEY, v INTEGER NOT NULL)");
  }

  /** The session's next event sequence (strictly increasing, kept across restarts). */
  nextSequence(): number {
    const row = this.sql.exec<{ v: number }>("INSERT INTO wb_meta (k, v) VALUES ('seq', 1) ON CONFLICT (k) DO UPDATE SET v = v + 1 RETURNING v").one();
    return row.v;
  }

  /** The first of `n` consecutive sequence numbers taken at once (for events recorded outside the buffer). */
  takeSequences(n: number): number {
    const row = this.sql.exec<{ v: number }>("INSERT INTO wb_meta (k, v) VALUES ('seq', ?) ON CONFLICT (k) DO UPDATE SET v = v + excluded.v RETURNING v", n).one();
    return row.v - n + 1;
  }

  /** Builds an event with the session's next sequence and keeps it for the next commit. */
  event(input: EmitInput, now: number, statusOrdinal?: number): EventRecord {
    return this.events([{ input, statusOrdinal }], now)[0]!;
  }

  /**
   * Events numbered in order and kept for the next commit, in one statement. Every record is built
   * before anything is written: one too large throws with nothing kept (its numbers are a gap, never
   * a repeat).
   */
  private events(drafts: { input: EmitInput; statusOrdinal?: number }[], now: number): EventRecord[] {
    if (drafts.length === 0) return [];
    const first = this.takeSequences(drafts.length);
    const records = drafts.map((d, i) => eventRecord(d.input, now, { sequence: first + i, ...(d.statusOrdinal ? { statusOrdinal: d.statusOrdinal } : {}) }));
    for (const part of jsonParts(records.map((r, i) => [first + i, r]))) {
      this.sql.exec("INSERT INTO wb_events (seq, record) SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]') FROM json_each(?)", part);
    }
    return records;
  }

  /** A new message (not in D1 yet) and the event of its state, if it has one. */
  add(row: MessageRow, now: number): EventRecord[] {
    // The event first: one too large throws before the row is kept (never a message without its event).
    const type = EVENT[row.status];
    const events = type ? [this.event({ type, accountId: row.accountId, sessionId: row.sessionId, data: toMessage(row) }, now, ORDINAL[row.status])] : [];
    this.sql.exec("INSERT INTO wb_messages (id, external_id, row, dirty, ver, touched) VALUES (?, ?, ?, 1, 1, ?)", row.id, row.externalId, JSON.stringify(row), now);
    return events;
  }

  /**
   * Rows queued to be sent (`pending`: no event yet), to D1 with the next commit. A row the buffer
   * already has is left as it is (a retried call changes nothing).
   */
  queued(rows: readonly MessageRow[], now: number): void {
    for (const part of jsonParts(rows.map((r) => [r.id, r]))) {
      this.sql.exec("INSERT INTO wb_messages (id, external_id, row, dirty, ver, touched) SELECT json_extract(value, '$[0]'), NULL, json_extract(value, '$[1]'), 1, 1, ? FROM json_each(?) WHERE true ON CONFLICT (id) DO NOTHING", now, part);
    }
  }

  /**
   * Rows read from D1 taken over already moved to `target` (a queued send just made): one write each,
   * where keeping a clean copy and then advancing it would write each twice. Rows the buffer already
   * knows are advanced from its own copy.
   */
  adopt(rows: MessageRow[], target: Target, at: number, error?: FailureReason): Advanced {
    // The buffer's own copies, advanced from the one look-up (no await in between: they are current).
    const found = this.lookup("id", rows.map((r) => r.id));
    const known = new Set(found.map((r) => r.id));
    const here = this.apply(found, target, at, error);
    const drafts: Draft[] = [];
    const taken: MessageRow[] = [];
    for (const r of rows) {
      if (known.has(r.id)) continue;
      const row = moved(r, target, at, drafts, error);
      if (row) taken.push(row);
    }
    const events = this.events(drafts, at);
    for (const part of jsonParts(taken.map((r) => [r.id, r.externalId, r]))) {
      this.sql.exec("INSERT INTO wb_messages (id, external_id, row, dirty, ver, touched) SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]'), json_extract(value, '$[2]'), 1, 1, ? FROM json_each(?) WHERE true ON CONFLICT (id) DO NOTHING", at, part);
    }
    return { changed: [...here.changed, ...taken], unknown: [], events: [...here.events, ...events] };
  }

  /** The rows this buffer knows of `ids` (its view is the current one: D1's may lag until the next commit). */
  known(ids: readonly string[]): MessageRow[] {
    return this.lookup("id", ids).map((r) => JSON.parse(r.row) as MessageRow);
  }

  private lookup(column: "id" | "external_id", keys: readonly string[]): { id: string; external_id: string | null; row: string; ver: number }[] {
    const out: { id: string; external_id: string | null; row: string; ver: number }[] = [];
    const unique = [...new Set(keys)];
    for (let i = 0; i < unique.length; i += KEYS_PER_LOOKUP) {
      const part = unique.slice(i, i + KEYS_PER_LOOKUP);
      out.push(...this.sql.exec<{ id: string; external_id: string | null; row: string; ver: number }>(`SELECT id, external_id, row, ver FROM wb_messages WHERE ${column} IN (${part.map(() => "?").join(",")})`, ...part).toArray());
    }
    return inKeyOrder(out, unique, (r) => (column === "id" ? r.id : r.external_id!));
  }

  /**
   * Moves the known messages of `selector` forward to `target`, forward only (a replayed or late
   * receipt changes nothing), one event per step taken, as `store/status.ts` does in D1.
   */
  advance(selector: Selector, target: Target, at: number, error?: FailureReason, opts: { externalId?: string | null; deliveredAt?: number } = {}): Advanced {
    const keys = "ids" in selector ? selector.ids : selector.externalIds;
    const found = this.lookup("ids" in selector ? "id" : "external_id", keys);
    const seen = new Set(found.map((r) => ("ids" in selector ? r.id : r.external_id!)));
    return { ...this.apply(found, target, at, error, opts), unknown: [...new Set(keys)].filter((k) => !seen.has(k)) };
  }

  /** The looked-up rows moved forward to `target`, with their events, written back. */
  private apply(found: readonly { row: string }[], target: Target, at: number, error?: FailureReason, opts: { externalId?: string | null; deliveredAt?: number } = {}): Omit<Advanced, "unknown"> {
    const out: Omit<Advanced, "unknown"> = { changed: [], events: [] };
    if (found.length === 0) return out;
    const drafts: Draft[] = [];
    for (const found1 of found) {
      const row = moved(JSON.parse(found1.row) as MessageRow, target, at, drafts, error, opts.externalId, opts.deliveredAt);
      if (row) out.changed.push(row);
    }
    // The events (numbered in the rows' order) and the rows, each in a statement per part.
    out.events = this.events(drafts, at);
    for (const part of jsonParts(out.changed.map((r) => [r.id, r.externalId, r]))) {
      this.sql.exec(
        "UPDATE wb_messages SET row = j.row, external_id = j.ext, dirty = 1, ver = ver + 1, touched = ? FROM (SELECT json_extract(value, '$[0]') AS id, json_extract(value, '$[1]') AS ext, json_extract(value, '$[2]') AS row FROM json_each(?)) AS j WHERE wb_messages.id = j.id",
        at,
        part,
      );
    }
    return out;
  }

  /** Rows and events waiting for D1, at most `limit` of each, oldest first. */
  pending(limit: number): FlushBatch {
    const events = this.sql.exec<{ seq: number; record: string }>("SELECT seq, record FROM wb_events ORDER BY seq LIMIT ?", limit).toArray();
    return {
      // The rows as stored (D1 takes their JSON as it is); SQLite reads the status.
      messages: this.sql
        .exec<{ id: string; status: MessageStatus; ver: number; json: string }>("SELECT id, json_extract(row, '$.status') AS status, ver, row AS json FROM wb_messages WHERE dirty = ? ORDER BY touched, id LIMIT ?", DIRTY, limit)
        .toArray(),
      events: events.map((r) => JSON.parse(r.record) as EventRecord),
      lastSeq: events.at(-1)?.seq ?? 0,
    };
  }

  /** How many rows and events wait for D1. */
  size(): number {
    return this.sql.exec<{ n: number }>("SELECT (SELECT count(*) FROM wb_messages WHERE dirty = ?) + (SELECT count(*) FROM wb_events) AS n", DIRTY).one().n;
  }

  /** `batch` is committed in D1: its rows are clean unless they changed since (a newer version), its events gone. */
  committed(batch: FlushBatch): void {
    for (const part of jsonParts(batch.messages.map((m) => [m.id, m.ver, cleanState(m.status)]))) {
      // The listed rows by primary key (`+dirty`: not through the dirty index, which would walk every dirty row per part).
      this.sql.exec(
        "UPDATE wb_messages SET dirty = j.clean FROM (SELECT json_extract(value, '$[0]') AS id, json_extract(value, '$[1]') AS ver, json_extract(value, '$[2]') AS clean FROM json_each(?)) AS j WHERE wb_messages.id = j.id AND wb_messages.ver = j.ver AND +wb_messages.dirty = 1",
        part,
      );
    }
    // The batch's events are the oldest ones: those up to its last sequence.
    this.sql.exec("DELETE FROM wb_events WHERE seq <= ?", batch.lastSeq);
  }

  /** Forgets clean rows unchanged for a while, and the oldest clean ones of each state over its bound (D1 has them). */
  prune(now: number): void {
    this.sql.exec("DELETE FROM wb_messages WHERE dirty IN (?, ?) AND touched < ?", OPEN, DONE, now - KEEP_MS);
    for (const [state, keep] of [[DONE, KEEP_DONE_ROWS], [OPEN, KEEP_OPEN_ROWS]] as const) {
      const over = this.sql.exec<{ n: number }>("SELECT count(*) AS n FROM wb_messages WHERE dirty = ?", state).one().n - keep;
      if (over > 0) this.sql.exec("DELETE FROM wb_messages WHERE id IN (SELECT id FROM wb_messages WHERE dirty = ? ORDER BY touched, id LIMIT ?)", state, over);
    }
  }

  /** Everything (the session was deleted and its last commit done). */
  clear(): void {
    this.sql.exec("DELETE FROM wb_messages");
  }
}
