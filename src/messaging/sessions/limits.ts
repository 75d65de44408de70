/**
 * A session's sending limits, kept in the Session DO's SQLite so no D1 write is added per message.
 * They are Meta's limits for the WhatsApp Cloud API, applied before Meta applies them:
 * - throughput: messages per second through the number (80 by default; Meta raises it to 1000);
 * - pair rate: messages to one recipient, a token bucket of `pairBurst` refilled one per
 *   `pairIntervalMs` (Meta: about one per 6 s, bursts up to 45 that must then be paid back);
 * - messaging limit: unique recipients reached outside their customer-service window (business-
 *   initiated, i.e. templates) in a rolling 24 hours: the portfolio's tier.
 * Synchronous and free of Worker bindings, so it is unit tested over any SqlStorage.
 */
import type { SqlLike } from "./outbox.ts";
import { DAY_MS, type LimitName, type SendLimits } from "../send-limits.ts";

export type Admission = { ok: true } | { ok: false; limit: LimitName; until: number };

/**
 * A portfolio's say on the messaging limit (portfolio.ts), asked before `admit`: the recipients its
 * shared window took, and when the others may try again. With one, the session's own window only
 * remembers whom the portfolio admitted (so a repeat costs no call) and counts nothing itself.
 */
export interface SharedWindow {
  admitted: ReadonlySet<string>;
  until: number;
}

export class LimitState {
  private readonly sql: SqlLike;

  constructor(sql: SqlLike) {
    this.sql = sql;
    sql.exec("CREATE TABLE IF NOT EXISTS limit_second (id INTEGER PRIMARY KEY CHECK (id = 1), second INTEGER NOT NULL, count INTEGER NOT NULL)");
    sql.exec("CREATE TABLE IF NOT EXISTS limit_pair (recipient TEXT PRIMARY KEY, tokens REAL NOT NULL, at INTEGER NOT NULL)");
    sql.exec("CREATE INDEX IF NOT EXISTS limit_pair_at ON limit_pair (at)");
    sql.exec("CREATE TABLE IF NOT EXISTS limit_reach (recipient TEXT PRIMARY KEY, at INTEGER NOT NULL)");
    sql.exec("CREATE INDEX IF NOT EXISTS limit_reach_at ON limit_reach (at)");
  }

  /**
   * One send to `to` now, if every limit allows it (and then it is counted); else the first limit in
   * the way and when to try again. `outsideWindow`: the send is business-initiated (counts toward the tier).
   */
  admit(limits: SendLimits, to: string, outsideWindow: boolean, now: number, shared?: SharedWindow): Admission {
    const second = Math.floor(now / 1000);
    if (limits.throughputPerSecond) {
      const row = this.sql.exec<{ second: number; count: number }>("SELECT second, count FROM limit_second WHERE id = 1").toArray()[0];
      if (row && row.second === second && row.count >= limits.throughputPerSecond) return { ok: false, limit: "throughput", until: (second + 1) * 1000 };
    }
    const pair = limits.pairIntervalMs ? this.pairTokens(limits, to, now) : null;
    if (pair !== null && pair < 1) return { ok: false, limit: "pair", until: now + Math.ceil((1 - pair) * limits.pairIntervalMs!) };
    const counted = limits.messagingLimit !== null && outsideWindow;
    if (counted) {
      this.pruneReach(now);
      const known = this.reached24h(to);
      if (!known && shared && !shared.admitted.has(to)) return { ok: false, limit: "messaging", until: shared.until };
      if (!known && !shared && this.reached() >= limits.messagingLimit!) return { ok: false, limit: "messaging", until: this.oldestReach()! + DAY_MS };
      if (!known) this.sql.exec("INSERT INTO limit_reach (recipient, at) VALUES (?, ?)", to, now);
    }
    if (limits.throughputPerSecond) {
      this.sql.exec("INSERT INTO limit_second (id, second, count) VALUES (1, ?, 1) ON CONFLICT (id) DO UPDATE SET count = CASE WHEN second = excluded.second THEN count + 1 ELSE 1 END, second = excluded.second", second);
    }
    if (pair !== null) this.setPair(to, pair - 1, now);
    return { ok: true };
  }

  /**
   * The person at `from` is now at `to` (a number change, or their number became known): the pair
   * bucket and the messaging limit's count go with them, so they are not counted as a new recipient.
   */
  renameRecipient(from: string, to: string): void {
    for (const table of ["limit_pair", "limit_reach"]) {
      // The person's row under the new address, if any, is the later one: the old one goes.
      this.sql.exec(`UPDATE OR IGNORE ${table} SET recipient = ? WHERE recipient = ?`, to, from);
      this.sql.exec(`DELETE FROM ${table} WHERE recipient = ?`, from);
    }
  }

  /** Which of `recipients` were not counted in the window this rolling 24 h (a send to the others counts no new recipient). */
  unknownOf(recipients: readonly string[], now: number): string[] {
    this.pruneReach(now);
    return [...new Set(recipients)].filter((to) => !this.reached24h(to));
  }

  /** Recipients counted more than 24 h ago leave the window. */
  private pruneReach(now: number): void {
    this.sql.exec("DELETE FROM limit_reach WHERE at <= ?", now - DAY_MS);
  }

  /** Whether `to` is counted in the window (pruned first). */
  private reached24h(to: string): boolean {
    return this.sql.exec("SELECT 1 FROM limit_reach WHERE recipient = ?", to).toArray().length > 0;
  }

  /** Meta refused a send for the pair rate (131056): this recipient's bucket is empty from now. */
  pairExhausted(to: string, now: number): void {
    this.setPair(to, 0, now);
  }

  /** Unique recipients counted in the rolling 24 h (as of the last admit). */
  reached(): number {
    return this.sql.exec<{ n: number }>("SELECT count(*) AS n FROM limit_reach").one().n;
  }

  oldestReach(): number | null {
    return this.sql.exec<{ at: number | null }>("SELECT min(at) AS at FROM limit_reach").one().at;
  }

  /**
   * When `queued` more sends, each to a new recipient outside its window (the worst case), would be
   * through: the later of what throughput and what the messaging limit allow, never before `lastDue`.
   */
  finishEstimate(limits: SendLimits, queued: number, lastDue: number, now: number, shared?: { reached: number; oldest: number | null }): number {
    let eta = Math.max(lastDue, now);
    if (limits.throughputPerSecond) eta = Math.max(eta, now + Math.ceil((queued * 1000) / limits.throughputPerSecond));
    if (limits.messagingLimit !== null) {
      // A portfolio's window is shared: what the other sessions of the portfolio reached is used up too.
      if (!shared) this.pruneReach(now);
      const window = shared ?? { reached: this.reached(), oldest: this.oldestReach() };
      const left = Math.max(0, limits.messagingLimit - window.reached);
      if (queued > left) {
        const days = Math.ceil((queued - left) / limits.messagingLimit);
        eta = Math.max(eta, (window.oldest ?? now) + days * DAY_MS);
      }
    }
    return eta;
  }

  /** Tokens of the recipient's bucket now (a full bucket has no row: rows idle that long are pruned). */
  private pairTokens(limits: SendLimits, to: string, now: number): number {
    const interval = limits.pairIntervalMs!;
    this.sql.exec("DELETE FROM limit_pair WHERE at < ?", now - limits.pairBurst * interval);
    const row = this.sql.exec<{ tokens: number; at: number }>("SELECT tokens, at FROM limit_pair WHERE recipient = ?", to).toArray()[0];
    if (!row) return limits.pairBurst;
    return Math.min(limits.pairBurst, row.tokens + (now - row.at) / interval);
  }

  private setPair(to: string, tokens: number, now: number): void {
    this.sql.exec("INSERT INTO limit_pair (recipient, tokens, at) VALUES (?, ?, ?) ON CONFLICT (recipient) DO UPDATE SET tokens = excluded.tokens, at = excluded.at", to, tokens, now);
  }
}
