/**
 * Keys of network notices this session has acted on, for notices the network may send again and
 * that leave no row of their own to deduplicate on (a call's connect or terminate: only an event).
 * Kept a week and at most MAX_KEYS (the oldest go first), over the Session DO's SQLite.
 */
const KEEP_MS = 7 * 24 * 3600 * 1000;
export const MAX_KEYS = 10_000;

export class SeenKeys {
  constructor(private readonly sql: SqlStorage) {
    sql.exec("CREATE TABLE IF NOT EXISTS seen_keys (key TEXT PRIMARY KEY, at INTEGER NOT NULL)");
    sql.exec("CREATE INDEX IF NOT EXISTS seen_keys_at ON seen_keys (at)");
  }

  /** True the first time `key` is claimed (it is then recorded); false when it was already. */
  claim(key: string, now = Date.now()): boolean {
    this.sql.exec("DELETE FROM seen_keys WHERE at <= ?", now - KEEP_MS);
    const fresh = this.sql.exec("INSERT INTO seen_keys (key, at) VALUES (?, ?) ON CONFLICT (key) DO NOTHING RETURNING key", key, now).toArray().length > 0;
    if (fresh) this.sql.exec("DELETE FROM seen_keys WHERE key IN (SELECT key FROM seen_keys ORDER BY at DESC, key LIMIT -1 OFFSET ?)", MAX_KEYS);
    return fresh;
  }

  /** Gives a claim back (what it was claimed for could not be recorded: a retry of the notice may). */
  release(key: string): void {
    this.sql.exec("DELETE FROM seen_keys WHERE key = ?", key);
  }
}
