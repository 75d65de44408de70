/**
 * The Session DO's queue of sends, in its SQLite storage: queued message ids with their due time
 * and attempts, campaigns on hold, scheduled campaign starts, and the pacing slot. Synchronous and
 * free of Worker bindings, so it is unit tested over any SqlStorage.
 */

import { jsonParts } from "../../platform/d1.ts";

/** The part of the DO's SqlStorage the outbox uses (a test can stand in for it). */
type SqlValue = ArrayBuffer | string | number | null;
export interface SqlLike {
  exec<T extends Record<string, SqlValue>>(query: string, ...bindings: unknown[]): { toArray(): T[]; one(): T; readonly rowsWritten: number };
}

/** How queued sends are spread: `rate` per minute (null = as fast as possible), +/- `jitter` of the interval. */
export interface Pacing {
  rate: number | null;
  jitter: number;
}

export interface DueSend {
  message_id: string;
  attempts: number;
  campaign_id: string | null;
}

/** How late the first queued send may be before the queue slips (less than any pacing interval's jitter matters). */
const LATE_TOLERANCE_MS = 50;

/** Outbox rows that may be sent: not of a campaign on hold. */
const NOT_HELD = "(campaign_id IS NULL OR campaign_id NOT IN (SELECT campaign_id FROM held_campaigns))";

/**
 * The one pacing rule: item i is due at `slot + i * interval` (+/- jitter, never before now); only
 * the items `place` accepts take a slot. Answers the next free slot.
 */
export function paceSlots(ids: readonly string[], pacing: Pacing, now: number, slot: number, place: (id: string, due: number) => boolean, random = Math.random): number {
  const interval = pacing.rate ? 60_000 / pacing.rate : 0;
  for (const id of ids) {
    const offset = interval ? (random() * 2 - 1) * pacing.jitter * interval : 0;
    if (place(id, Math.max(now, Math.round(slot + offset)))) slot += interval;
  }
  return slot;
}

export class Outbox {
  private readonly sql: SqlLike;

  constructor(sql: SqlLike) {
    this.sql = sql;
    sql.exec("CREATE TABLE IF NOT EXISTS outbox (message_id TEXT PRIMARY KEY, due INTEGER NOT NULL, attempts INTEGER NOT NULL DEFAULT 0)");
    sql.exec("CREATE INDEX IF NOT EXISTS outbox_due ON outbox (due)");
    // Campaigns: which campaign a queued send belongs to (added after the first release).
    if (!sql.exec<{ name: string }>("PRAGMA table_info(outbox)").toArray().some((c) => c.name === "campaign_id")) {
      sql.exec("ALTER TABLE outbox ADD COLUMN campaign_id TEXT");
    }
    sql.exec("CREATE INDEX IF NOT EXISTS outbox_campaign ON outbox (campaign_id, due)");
    // Paced sends (added later): only they slip when the alarm is late; unpaced ones are a backlog.
    if (!sql.exec<{ name: string }>("PRAGMA table_info(outbox)").toArray().some((c) => c.name === "paced")) {
      sql.exec("ALTER TABLE outbox ADD COLUMN paced INTEGER NOT NULL DEFAULT 0");
    }
    sql.exec("CREATE INDEX IF NOT EXISTS outbox_paced_due ON outbox (due) WHERE paced = 1");
    // Sends waiting for the messaging limit (added later): a raised limit wakes them at once.
    if (!sql.exec<{ name: string }>("PRAGMA table_info(outbox)").toArray().some((c) => c.name === "limit_wait")) {
      sql.exec("ALTER TABLE outbox ADD COLUMN limit_wait INTEGER NOT NULL DEFAULT 0");
    }
    sql.exec("CREATE TABLE IF NOT EXISTS held_campaigns (campaign_id TEXT PRIMARY KEY)");
    sql.exec("CREATE TABLE IF NOT EXISTS campaign_timers (campaign_id TEXT PRIMARY KEY, due INTEGER NOT NULL)");
    sql.exec("CREATE TABLE IF NOT EXISTS outbox_pacing (id INTEGER PRIMARY KEY CHECK (id = 1), next_slot INTEGER NOT NULL)");
  }

  /** Where the next paced send goes (never before now). */
  nextSlot(now: number): number {
    const row = this.sql.exec<{ next_slot: number }>("SELECT next_slot FROM outbox_pacing WHERE id = 1").toArray()[0];
    return Math.max(now, row?.next_slot ?? 0);
  }

  setNextSlot(slot: number): void {
    this.sql.exec("INSERT INTO outbox_pacing (id, next_slot) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET next_slot = excluded.next_slot", slot);
  }

  /** Queues sends, paced from the next free slot. Ids already queued are ignored and take no slot. */
  enqueue(ids: readonly string[], pacing: Pacing, campaignId: string | null, now: number): void {
    // Ids already queued (or repeated) take no slot. A statement per part, not per id: a large
    // backlog is enqueued at the cost of a few statements.
    const queued = this.queuedOf(ids);
    const fresh = [...new Set(ids)].filter((id) => !queued.has(id));
    const rows: [string, number][] = [];
    const slot = paceSlots(fresh, pacing, now, this.nextSlot(now), (id, due) => rows.push([id, due]) > 0);
    this.insert(rows, campaignId, pacing.rate ? 1 : 0);
    if (pacing.rate) this.setNextSlot(slot);
  }

  /** Queues sends due at `due`, unpaced (they wait for a limit, not for pacing). */
  queueAt(ids: readonly string[], due: number, campaignId: string | null, limitWait = false): void {
    this.insert(ids.map((id) => [id, due]), campaignId, 0, limitWait ? 1 : 0);
  }

  private insert(rows: readonly [string, number][], campaignId: string | null, paced: 0 | 1, limitWait: 0 | 1 = 0): void {
    for (const part of jsonParts(rows)) {
      this.sql.exec("INSERT OR IGNORE INTO outbox (message_id, due, campaign_id, paced, limit_wait) SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]'), ?, ?, ? FROM json_each(?) WHERE true", campaignId, paced, limitWait, part);
    }
  }

  /** Which of `ids` are queued already. */
  private queuedOf(ids: readonly string[]): Set<string> {
    const out = new Set<string>();
    for (const part of jsonParts(ids)) {
      for (const r of this.sql.exec<{ message_id: string }>("SELECT message_id FROM outbox WHERE message_id IN (SELECT value FROM json_each(?))", part).toArray()) out.add(r.message_id);
    }
    return out;
  }

  /** The session's limits changed: sends waiting for the messaging limit are due now, to be admitted again (or wait again). */
  wakeLimitWaits(now: number): number {
    return this.sql.exec("UPDATE outbox SET due = ?, limit_wait = 0 WHERE limit_wait = 1 AND due > ?", now, now).rowsWritten;
  }

  /** A campaign's queued sends: how many, and when the last is due (null: none queued). */
  campaignQueue(campaignId: string): { queued: number; lastDue: number | null } {
    const r = this.sql.exec<{ n: number; last: number | null }>("SELECT count(*) AS n, max(due) AS last FROM outbox WHERE campaign_id = ?", campaignId).one();
    return { queued: r.n, lastDue: r.last };
  }

  /** Whether any send of the campaign is still queued here. */
  hasQueued(campaignId: string): boolean {
    return this.sql.exec("SELECT 1 FROM outbox WHERE campaign_id = ? LIMIT 1", campaignId).toArray().length > 0;
  }

  hold(campaignIds: readonly string[]): void {
    for (const id of campaignIds) this.sql.exec("INSERT OR IGNORE INTO held_campaigns (campaign_id) VALUES (?)", id);
  }

  isHeld(campaignId: string | null): boolean {
    if (!campaignId) return false;
    return this.sql.exec("SELECT 1 FROM held_campaigns WHERE campaign_id = ?", campaignId).toArray().length > 0;
  }

  /** Lifts the hold; with a rate, the campaign's sends are paced again from the next free slot, in their order. */
  release(campaignId: string, pacing: Pacing, now: number): void {
    this.sql.exec("DELETE FROM held_campaigns WHERE campaign_id = ?", campaignId);
    if (!pacing.rate) return;
    const ids = this.sql.exec<{ message_id: string }>("SELECT message_id FROM outbox WHERE campaign_id = ? ORDER BY due, message_id", campaignId).toArray().map((r) => r.message_id);
    const slot = paceSlots(ids, pacing, now, this.nextSlot(now), (id, due) => {
      this.sql.exec("UPDATE outbox SET due = ?, paced = 1 WHERE message_id = ?", due, id);
      return true;
    });
    this.setNextSlot(slot);
  }

  /** Forgets the campaign (hold, timer, queued sends) except the sends in `inFlight`; answers those. */
  drop(campaignId: string, inFlight: ReadonlySet<string>): string[] {
    this.sql.exec("DELETE FROM held_campaigns WHERE campaign_id = ?", campaignId);
    this.cancelTimer(campaignId);
    const kept: string[] = [];
    for (const { message_id } of this.sql.exec<{ message_id: string }>("SELECT message_id FROM outbox WHERE campaign_id = ?", campaignId).toArray()) {
      if (inFlight.has(message_id)) kept.push(message_id);
      else this.remove([message_id]);
    }
    return kept;
  }

  setTimer(campaignId: string, at: number): void {
    this.sql.exec("INSERT OR REPLACE INTO campaign_timers (campaign_id, due) VALUES (?, ?)", campaignId, at);
  }

  cancelTimer(campaignId: string): void {
    this.sql.exec("DELETE FROM campaign_timers WHERE campaign_id = ?", campaignId);
  }

  dueTimers(now: number): string[] {
    return this.sql.exec<{ campaign_id: string }>("SELECT campaign_id FROM campaign_timers WHERE due <= ?", now).toArray().map((r) => r.campaign_id);
  }

  /**
   * A late alarm must not turn a paced queue into a burst: when the first paced send is more than
   * `tolerance` ms overdue, every paced send (and the next free slot) moves later by that much, so
   * the spacing between sends stays what pacing gave them. Unpaced sends have no spacing to keep:
   * being overdue is only their backlog, and moving them would rewrite the whole backlog on every
   * chunk of it (a cost that grew with the square of an unpaced campaign's size).
   */
  slipLate(now: number, tolerance = LATE_TOLERANCE_MS): void {
    const first = this.sql.exec<{ due: number | null }>(`SELECT min(due) AS due FROM outbox WHERE paced = 1 AND ${NOT_HELD}`).one().due;
    if (first === null || now - first <= tolerance) return;
    const late = now - first;
    this.sql.exec(`UPDATE outbox SET due = due + ? WHERE paced = 1 AND ${NOT_HELD}`, late);
    this.sql.exec("UPDATE outbox_pacing SET next_slot = next_slot + ? WHERE id = 1", late);
  }

  /** Sends due now, not on hold, oldest first (of one time, in the order they were queued). */
  due(now: number, limit: number): DueSend[] {
    return this.sql.exec<{ message_id: string; attempts: number; campaign_id: string | null }>(`SELECT message_id, attempts, campaign_id FROM outbox WHERE due <= ? AND ${NOT_HELD} ORDER BY due, rowid LIMIT ?`, now, limit).toArray();
  }

  /** When the alarm is next needed: the first send not on hold, or the first campaign timer. */
  nextDue(): number | null {
    const send = this.sql.exec<{ due: number | null }>(`SELECT min(due) AS due FROM outbox WHERE ${NOT_HELD}`).one().due;
    const timer = this.sql.exec<{ due: number | null }>("SELECT min(due) AS due FROM campaign_timers").one().due;
    const next = Math.min(send ?? Infinity, timer ?? Infinity);
    return next === Infinity ? null : next;
  }

  retryLater(messageId: string, due: number, attempts: number, limitWait = false): void {
    this.sql.exec("UPDATE outbox SET due = ?, attempts = ?, limit_wait = ? WHERE message_id = ?", due, attempts, limitWait ? 1 : 0, messageId);
  }

  remove(messageIds: readonly string[]): void {
    for (const part of jsonParts(messageIds)) this.sql.exec("DELETE FROM outbox WHERE message_id IN (SELECT value FROM json_each(?))", part);
  }

  queuedIds(): string[] {
    return this.sql.exec<{ message_id: string }>("SELECT message_id FROM outbox").toArray().map((r) => r.message_id);
  }

  /** Empties the queue (the session stopped). */
  clear(): void {
    this.sql.exec("DELETE FROM outbox");
  }
}
