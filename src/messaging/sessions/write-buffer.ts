/**
 * The Session DO as the write buffer of its own traffic, over its SQLite storage. A send is answered
 * once its row and events are here (durable: the DO's output gate holds the answer until the
 * storage commit); the DO then writes them to D1 in group commits (`store/group-writes.ts`) and puts
 * the events on the queue with their content. Receipts of messages it knows are applied here, in
 * order, each step with its event. Synchronous and free of Worker bindings, so it is unit tested
 * over any SqlStorage, as the outbox is.
 *
 * Tables: `wb_rows` the session's recent messages as the DO knows them, each with `chg`, the number
 * of its last change (a counter of the buffer's), and `state` (OPEN: still expecting receipts, DONE:
 * final); `wb_meta` the session's last event sequence and `flushed`, the last change D1 has (a row
 * whose `chg` is above it waits for a commit); `wb_events` events not yet committed to D1, in their
 * sequence; `wb_marks` the change counter with the time of the last change, at each pruning (what
 * pruning by age reads). A commit moves the mark: it rewrites no row (each status step already
 * rewrites its row once; marking the rows clean again after each commit had doubled that).
 */
import { eventRecord, type EmitInput, type EventOrder } from "../../events/event-record.ts";
import type { EventRecord, EventType } from "../../events/types.ts";
import { toMessage, type MessageRow } from "../messages/mapper.ts";
import { canAdvance, deliveredStamp, statusesBetween, type MessageStatus } from "../status.ts";
import { jsonParts } from "../../platform/d1.ts";
import { inKeyOrder } from "../../platform/batching.ts";
import type { SqlLike } from "./outbox.ts";
import { migrateDirtyFlags } from "./write-buffer-legacy.ts";

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

/** Values of `wb_rows.state`: read, failed and received messages take no more receipts. */
const OPEN = 0;
const DONE = -1;
const stateOf = (status: MessageStatus): number => (canAdvance(status, "read") ? OPEN : DONE);
/** Keys looked up per statement in the DO's SQLite (its bound-parameter limit is 100). */
const KEYS_PER_LOOKUP = 90;

const EVENT: Partial<Record<MessageStatus, EventType>> = { sent: "message.sent", delivered: "message.delivered", read: "message.read" };
const ORDINAL: Partial<Record<MessageStatus, number>> = { sent: 1, delivered: 2, read: 3 };

/** The order fields of a message status event numbered now (events written to D1 directly take theirs here too). */
export function statusOrder(buffer: WriteBuffer, status: "sent" | "delivered" | "read"): EventOrder {
  return { sequence: buffer.nextSequence(), statusOrdinal: ORDINAL[status]! };
}

/**
 * What a flush takes: the rows changed since the last commit (each as its stored JSON text of
 * `MessageRow`, with its id) and the uncommitted events, oldest first.
 */
export interface FlushBatch {
  messages: { id: string; json: string }[];
  events: EventRecord[];
  /** The sequence of the last of `events` (0: none). */
  lastSeq: number;
  /** The change number of the last of `messages` (0: none). */
  lastChg: number;
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

export class WriteBuffer {
  private readonly sql: SqlLike;
  /** The last change number given (rows above `flushed` wait for D1). */
  private chg: number;
  /** The last change D1 has. */
  private flushed: number;
  /** When the last change was made (0: none since the start), and the time of the last mark written. */
  private changedAt = 0;
  private markedAt = 0;
  /** The clock of the marks: a change's own time can be the network's, hours old (a late receipt). */
  private readonly clock: () => number;

  constructor(sql: SqlLike, clock: () => number = Date.now) {
    this.sql = sql;
    this.clock = clock;
    sql.exec("CREATE TABLE IF NOT EXISTS wb_rows (id TEXT PRIMARY KEY, external_id TEXT, row TEXT NOT NULL, state INTEGER NOT NULL, chg INTEGER NOT NULL)");
    sql.exec("CREATE INDEX IF NOT EXISTS wb_rows_external ON wb_rows (external_id) WHERE external_id IS NOT NULL");
    // The flush reads changes above the mark in order; pruning takes the oldest of a state.
    sql.exec("CREATE INDEX IF NOT EXISTS wb_rows_chg ON wb_rows (chg)");
    sql.exec("CREATE INDEX IF NOT EXISTS wb_rows_state ON wb_rows (state, chg)");
    sql.exec("CREATE TABLE IF NOT EXISTS wb_events (seq INTEGER PRIMARY KEY, record TEXT NOT NULL)");
    sql.exec("CREATE TABLE IF NOT EXISTS wb_meta (k TEXT PRIMARY KEY, v INTEGER NOT NULL)");
    sql.exec("CREATE TABLE IF NOT EXISTS wb_marks (at INTEGER PRIMARY KEY, chg INTEGER NOT NULL)");
    this.flushed = sql.exec<{ v: number }>("SELECT coalesce((SELECT v FROM wb_meta WHERE k = 'flushed'), 0) AS v").one().v;
    migrateDirtyFlags(sql, this.flushed, { open: OPEN, done: DONE });
    // Never below the mark: a change numbered under it would count as in D1 already.
    this.chg = Math.max(this.flushed, sql.exec<{ v: number }>("SELECT coalesce(max(chg), 0) AS v FROM wb_rows").one().v);
  }

  /** The first of `n` consecutive change numbers, made now. */
  private changes(n: number): number {
    const first = this.chg + 1;
    this.chg += n;
    this.changedAt = Math.max(this.changedAt, this.clock());
    return first;
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
    this.sql.exec("INSERT INTO wb_rows (id, external_id, row, state, chg) VALUES (?, ?, ?, ?, ?)", row.id, row.externalId, JSON.stringify(row), stateOf(row.status), this.changes(1));
    return events;
  }

  /**
   * Rows queued to be sent (`pending`: no event yet), to D1 with the next commit. A row the buffer
   * already has is left as it is (a retried call changes nothing).
   */
  queued(rows: readonly MessageRow[]): void {
    this.insert(rows, OPEN);
  }

  /** New rows, numbered in their order, in a statement per JSON part; rows the buffer has are left as they are. */
  private insert(rows: readonly MessageRow[], state: number | null): void {
    if (rows.length === 0) return;
    const first = this.changes(rows.length);
    const tuples = rows.map((r, i) => [r.id, r.externalId, r, state ?? stateOf(r.status), first + i]);
    for (const part of jsonParts(tuples)) {
      this.sql.exec(
        "INSERT INTO wb_rows (id, external_id, row, state, chg) SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]'), json_extract(value, '$[2]'), json_extract(value, '$[3]'), json_extract(value, '$[4]') FROM json_each(?) WHERE true ON CONFLICT (id) DO NOTHING",
        part,
      );
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
    this.insert(taken, null);
    return { changed: [...here.changed, ...taken], unknown: [], events: [...here.events, ...events] };
  }

  /** The rows this buffer knows of `ids` (its view is the current one: D1's may lag until the next commit). */
  known(ids: readonly string[]): MessageRow[] {
    return this.lookup("id", ids).map((r) => JSON.parse(r.row) as MessageRow);
  }

  private lookup(column: "id" | "external_id", keys: readonly string[]): { id: string; external_id: string | null; row: string }[] {
    const out: { id: string; external_id: string | null; row: string }[] = [];
    const unique = [...new Set(keys)];
    for (let i = 0; i < unique.length; i += KEYS_PER_LOOKUP) {
      const part = unique.slice(i, i + KEYS_PER_LOOKUP);
      out.push(...this.sql.exec<{ id: string; external_id: string | null; row: string }>(`SELECT id, external_id, row FROM wb_rows WHERE ${column} IN (${part.map(() => "?").join(",")})`, ...part).toArray());
    }
    // In the caller's order (SQLite answers an IN list in index order): a bulk's, whose events are numbered in it.
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
    if (out.changed.length === 0) return out;
    const first = this.changes(out.changed.length);
    for (const part of jsonParts(out.changed.map((r, i) => [r.id, r.externalId, r, stateOf(r.status), first + i]))) {
      this.sql.exec(
        "UPDATE wb_rows SET row = j.row, external_id = j.ext, state = j.state, chg = j.chg FROM (SELECT json_extract(value, '$[0]') AS id, json_extract(value, '$[1]') AS ext, json_extract(value, '$[2]') AS row, json_extract(value, '$[3]') AS state, json_extract(value, '$[4]') AS chg FROM json_each(?)) AS j WHERE wb_rows.id = j.id",
        part,
      );
    }
    return out;
  }

  /** Rows and events waiting for D1, at most `limit` of each, oldest first. */
  pending(limit: number): FlushBatch {
    const events = this.sql.exec<{ seq: number; record: string }>("SELECT seq, record FROM wb_events ORDER BY seq LIMIT ?", limit).toArray();
    // The rows as stored (D1 takes their JSON as it is).
    const messages = this.sql.exec<{ id: string; json: string; chg: number }>("SELECT id, row AS json, chg FROM wb_rows WHERE chg > ? ORDER BY chg LIMIT ?", this.flushed, limit).toArray();
    return {
      messages: messages.map((m) => ({ id: m.id, json: m.json })),
      events: events.map((r) => JSON.parse(r.record) as EventRecord),
      lastSeq: events.at(-1)?.seq ?? 0,
      lastChg: messages.at(-1)?.chg ?? 0,
    };
  }

  /** How many rows and events wait for D1. */
  size(): number {
    return this.sql.exec<{ n: number }>("SELECT (SELECT count(*) FROM wb_rows WHERE chg > ?) + (SELECT count(*) FROM wb_events) AS n", this.flushed).one().n;
  }

  /**
   * `batch` is committed in D1: the mark moves to its last change (every change up to it was in the
   * batch, which took them in order; a row that changed again since has a newer number), its events
   * are gone. One commit at a time (GroupCommit).
   */
  committed(batch: FlushBatch): void {
    if (batch.lastChg > this.flushed) {
      this.flushed = batch.lastChg;
      this.sql.exec("INSERT INTO wb_meta (k, v) VALUES ('flushed', ?) ON CONFLICT (k) DO UPDATE SET v = excluded.v", this.flushed);
    }
    // The batch's events are the oldest ones: those up to its last sequence.
    if (batch.lastSeq > 0) this.sql.exec("DELETE FROM wb_events WHERE seq <= ?", batch.lastSeq);
  }

  /** Forgets committed rows unchanged for a while, and the oldest committed ones of each state over its bound (D1 has them). */
  prune(now: number): void {
    // The counter written down with the time of the last change (every change numbered up to it was
    // made by then): rows numbered up to the newest mark older than KEEP_MS have not changed since.
    if (this.changedAt > this.markedAt) {
      this.markedAt = this.changedAt;
      this.sql.exec("INSERT INTO wb_marks (at, chg) VALUES (?, ?) ON CONFLICT (at) DO UPDATE SET chg = max(chg, excluded.chg)", this.changedAt, this.chg);
    }
    const old = this.sql.exec<{ chg: number | null }>("SELECT max(chg) AS chg FROM wb_marks WHERE at <= ?", now - KEEP_MS).one().chg;
    if (old !== null) {
      this.sql.exec("DELETE FROM wb_rows WHERE chg <= ?", Math.min(old, this.flushed));
      this.sql.exec("DELETE FROM wb_marks WHERE at <= ?", now - KEEP_MS);
    }
    for (const [state, keep] of [[DONE, KEEP_DONE_ROWS], [OPEN, KEEP_OPEN_ROWS]] as const) {
      const over = this.sql.exec<{ n: number }>("SELECT count(*) AS n FROM wb_rows WHERE state = ?", state).one().n - keep;
      if (over > 0) this.sql.exec("DELETE FROM wb_rows WHERE id IN (SELECT id FROM wb_rows WHERE state = ? AND chg <= ? ORDER BY chg LIMIT ?)", state, this.flushed, over);
    }
  }

  /** Everything (the session was deleted and its last commit done). */
  clear(): void {
    this.sql.exec("DELETE FROM wb_rows");
  }
}
