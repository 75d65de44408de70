/**
 * The messaging limit's rolling 24-hour window of a business portfolio, shared by the sessions of one
 * account that name the same `businessAccountId` (Meta counts unique recipients per portfolio, not per
 * number). Kept by one PortfolioDO per account and portfolio (portfolio-do.ts) over its SQLite; a session
 * asks it once per chunk of queued sends (or per API send to a recipient it has not reached), never per
 * message it already knows. Synchronous and free of Worker bindings, so it is unit tested over any SqlStorage.
 */
import type { SqlLike } from "./outbox.ts";
import { DAY_MS } from "../send-limits.ts";

/** Recipients one call may ask about (a session asks per outbox chunk, which is smaller). */
export const MAX_RECIPIENTS_PER_CALL = 200;

/** The answer to a session's ask: who may be reached now (counted), and when the others may try again. */
export interface PortfolioAnswer {
  admitted: string[];
  /** When the oldest counted recipient leaves the window (only meaningful when some were refused). */
  until: number;
}

/** The window's state, for a campaign's eta. */
export interface WindowState {
  reached: number;
  oldest: number | null;
}

export class PortfolioWindow {
  private readonly sql: SqlLike;

  constructor(sql: SqlLike) {
    this.sql = sql;
    sql.exec("CREATE TABLE IF NOT EXISTS portfolio_reach (recipient TEXT PRIMARY KEY, at INTEGER NOT NULL)");
    sql.exec("CREATE INDEX IF NOT EXISTS portfolio_reach_at ON portfolio_reach (at)");
  }

  /**
   * Counts each recipient not yet reached in the window while `limit` allows; a recipient already in
   * it is admitted free. At most `limit` rows are ever kept (the window's memory is bounded by the tier).
   */
  admit(recipients: readonly string[], limit: number, now: number): PortfolioAnswer {
    this.prune(now);
    let reached = this.state().reached;
    const admitted: string[] = [];
    for (const to of new Set(recipients.slice(0, MAX_RECIPIENTS_PER_CALL))) {
      if (this.sql.exec("SELECT 1 FROM portfolio_reach WHERE recipient = ?", to).toArray().length > 0) {
        admitted.push(to);
        continue;
      }
      if (reached >= limit) continue;
      this.sql.exec("INSERT INTO portfolio_reach (recipient, at) VALUES (?, ?)", to, now);
      reached += 1;
      admitted.push(to);
    }
    return { admitted, until: (this.state().oldest ?? now) + DAY_MS };
  }

  state(now?: number): WindowState {
    if (now !== undefined) this.prune(now);
    const row = this.sql.exec<{ n: number; at: number | null }>("SELECT count(*) AS n, min(at) AS at FROM portfolio_reach").one();
    return { reached: row.n, oldest: row.at };
  }

  private prune(now: number): void {
    this.sql.exec("DELETE FROM portfolio_reach WHERE at <= ?", now - DAY_MS);
  }
}

/** The Durable Object name of an account's portfolio: the account is part of it, so accounts never share one. */
export function portfolioName(accountId: string, businessAccountId: string): string {
  return `${accountId}:${businessAccountId}`;
}
