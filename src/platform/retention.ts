/**
 * How long rows are kept, per table, from [vars] (wrangler.toml); each module purges its own tables
 * with `purgeBatch` from the every-minute cron. A value of "0" or "" keeps a table's rows forever.
 */
export const RETENTION_DEFAULTS = {
  RETENTION_EVENTS_DAYS: 30,
  RETENTION_WEBHOOK_DELIVERIES_DAYS: 30,
  RETENTION_WEBHOOK_ATTEMPTS_DAYS: 30,
  RETENTION_COMPILE_JOBS_DAYS: 7,
  RETENTION_MESSAGES_DAYS: null,
} as const satisfies Record<string, number | null>;

export type RetentionVar = keyof typeof RETENTION_DEFAULTS;
export type Retention = Record<RetentionVar, number | null>;

declare global {
  interface Env extends Partial<Record<RetentionVar, string>> {}
}

/** Rows deleted per table per cron tick: bounded work per minute, whatever the backlog. */
export const PURGE_BATCH = 500;
const DAY_MS = 86_400_000;
const parsed = new WeakMap<object, Retention>();

function days(raw: string | undefined, fallback: number | null): number | null {
  if (raw === undefined) return fallback;
  const text = raw.trim();
  if (text === "" || text === "0") return null;
  const n = Number(text);
  return Number.isFinite(n) && n > 0 ? n : fallback;
}

/** The retention of every table, parsed once per env. */
export function retention(env: Env): Retention {
  let config = parsed.get(env);
  if (!config) {
    config = Object.fromEntries(Object.entries(RETENTION_DEFAULTS).map(([name, fallback]) => [name, days(env[name as RetentionVar], fallback)])) as Retention;
    parsed.set(env, config);
  }
  return config;
}

/**
 * The smallest id `newId(prefix)` gives at `at`: ids are `prefix_` + the creation time in base 36 (9
 * digits) + randomness, so `id < idAt(prefix, cutoff)` selects rows created before `cutoff` by the
 * primary key alone, oldest first.
 */
export function idAt(prefix: string, at: number): string {
  return `${prefix}_${Math.max(0, at).toString(36).padStart(9, "0")}`;
}

export interface PurgeSpec {
  table: string;
  /** The id prefix of the table's rows (see platform/ids.ts). */
  prefix: string;
  /** Rows created before this instant may go. */
  before: number;
  /** Further SQL condition on the row (e.g. only finished work), referring to the table by name. */
  where?: string;
}

/** The oldest rows past their retention (the given columns), at most PURGE_BATCH, oldest first. */
export async function oldestExpired<T extends Record<string, unknown>>(db: D1Database, spec: PurgeSpec, columns: string): Promise<T[]> {
  const res = await db
    .prepare(`SELECT ${columns} FROM ${spec.table} WHERE id < ?1 AND created_at < ?2 ${spec.where ? `AND (${spec.where})` : ""} ORDER BY id LIMIT ?3`)
    .bind(idAt(spec.prefix, spec.before), spec.before, PURGE_BATCH)
    .all<T>();
  return res.results;
}

/** Deletes one batch of rows past their retention; answers how many went. */
export async function purgeBatch(db: D1Database, spec: PurgeSpec): Promise<number> {
  const res = await db
    .prepare(`DELETE FROM ${spec.table} WHERE id IN (SELECT id FROM ${spec.table} WHERE id < ?1 AND created_at < ?2 ${spec.where ? `AND (${spec.where})` : ""} ORDER BY id LIMIT ?3)`)
    .bind(idAt(spec.prefix, spec.before), spec.before, PURGE_BATCH)
    .run();
  return res.meta.changes;
}

export const daysAgo = (now: number, d: number) => now - d * DAY_MS;
