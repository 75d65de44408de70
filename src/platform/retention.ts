import { config, type Retention } from "./config.ts";

/**
 * How long rows are kept, per table, from [vars] (wrangler.toml, parsed in config.ts); each module purges
 * its own tables with `purgeBatch` from the every-minute cron. A value of "0" or "" keeps rows forever.
 */
export type RetentionVar = keyof Retention;
export type { Retention } from "./config.ts";

/** Rows deleted per table per cron tick: bounded work per minute, whatever the backlog. */
export const PURGE_BATCH = 500;
const DAY_MS = 86_400_000;

/** The retention of every table (parsed once per env, in platform/config.ts). */
export function retention(env: Env): Retention {
  return config(env).retention;
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
