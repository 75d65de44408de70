import type { SqlLike } from "./outbox.ts";

/**
 * Keys of network notices this session has acted on, for notices the network may send again and
 * that leave no row of their own to deduplicate on (a call's connect or terminate: only an event).
 * Kept a week and at most MAX_KEYS (the oldest go first), over the Session DO's SQLite.
 */
export const KEEP_MS = 7 * 24 * 3600 * 1000;
export const MAX_KEYS = 10_000;

export class SeenKeys {
  private readonly sql: SqlLike;

  constructor(sql: SqlLike) {
    this.sql = sql;
    sql.exec("CREATE TABLE IF NOT EXISTS seen_keys (key TEXT PRIMARY KEY, at INTEGER NOT NULL)");
    sql.exec("CREATE INDEX IF NOT EXISTS seen_keys_at ON seen_keys (at)");
  }

  /** True the first time `key` is claimed (it is then recorded); false when it was already. */
  claim(key: string, now = Date.now()): boolean {
    this.sql.exec("DELETE FROM seen_keys WHERE at <= ?", now - KEEP_MS);
    const fresh = this.sql.exec("INSERT INTO seen_keys (key, at) VALUES (?, ?) ON CONFLICT (key) DO NOTHING RETURNING key", key, now).toArray().length > 0;
    // Rowids grow with each insert: everything more than MAX_KEYS inserts old goes (a range of the rowid, not a scan).
    if (fresh) this.sql.exec("DELETE FROM seen_keys WHERE rowid <= (SELECT max(rowid) FROM seen_keys) - ?", MAX_KEYS);
    return fresh;
  }

  /** Gives a claim back (what it was claimed for could not be recorded: a retry of the notice may). */
  release(key: string): void {
    this.sql.exec("DELETE FROM seen_keys WHERE key = ?", key);
  }
}
