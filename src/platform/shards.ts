import { eq } from "drizzle-orm";
import { getDb, type Db } from "../db/client.ts";
import { accounts } from "../db/schema/index.ts";
import { config } from "./config.ts";
import { meteredD1 } from "./d1-usage.ts";
import { errors } from "./errors.ts";
import { log } from "./log.ts";
import { pickShard } from "./shard-pick.ts";

export { pickShard } from "./shard-pick.ts";

/**
 * The databases: `DB` is the directory (accounts, keys, idempotency, dead letters, compile jobs and
 * whatever is looked up before the account is known); messaging and events rows live in the shard
 * `accounts.shard` names, bound as `SHARD_<n>`. An account's shard never changes, so it is cached
 * in the isolate once read (auth primes it with the key lookup). The one way to any of them.
 */
export interface Shard {
  index: number;
  d1: D1Database;
  db: Db;
}

/** The directory database (raw D1, counted as `directory`). */
export function directoryD1(env: Env): D1Database {
  return meteredD1(env.DB, "directory");
}

export function directoryDb(env: Env): Db {
  return getDb(directoryD1(env));
}

/** Every shard index, for work that runs over all of them (cron, retention). */
export function shardIndexes(env: Env): number[] {
  return Array.from({ length: config(env).shards.count }, (_, i) => i);
}

/** Shard `index` (from `accounts.shard`, or carried in a queue message); an index with no binding is a 500. */
export function shardAt(env: Env, index: number): Shard {
  const raw = env as unknown as Record<string, D1Database | undefined>;
  const valid = Number.isInteger(index) && index >= 0 && index < config(env).shards.count;
  // No SHARD_<n> bound at all: the directory is the one shard (a single-database setup).
  const binding = !valid ? undefined : raw.SHARD_0 ? raw[`SHARD_${index}`] : env.DB;
  if (!binding) throw Object.assign(errors.internal(), { cause: `no binding for shard ${index}` });
  const d1 = meteredD1(binding, `shard_${index}`);
  return { index, d1, db: getDb(d1) };
}

/** A shard index a queue message carried: a missing one is 0 (messages queued before shards). */
export function carriedShard(value: unknown): number {
  return typeof value === "number" && Number.isInteger(value) && value >= 0 && value < 1024 ? value : 0;
}

const known = new Map<string, number>();
const KNOWN_MAX = 50_000;

/** Records an account's shard read elsewhere (auth's key lookup), so `accountShard` needs no query. */
export function rememberAccountShard(accountId: string, index: number): void {
  if (known.has(accountId)) return;
  if (known.size >= KNOWN_MAX) known.delete(known.keys().next().value!);
  known.set(accountId, index);
}

/** The shard of an account: from the isolate's cache, else one directory read. An unknown account is a 404. */
export async function accountShard(env: Env, accountId: string): Promise<Shard> {
  let index = known.get(accountId);
  if (index === undefined) {
    const row = await directoryDb(env).select({ shard: accounts.shard }).from(accounts).where(eq(accounts.id, accountId)).get();
    if (!row) throw errors.notFound("account");
    index = row.shard;
    rememberAccountShard(accountId, index);
  }
  return shardAt(env, index);
}

export function newAccountShard(env: Env, accountId: string): number {
  return pickShard(accountId, config(env).shards.newAccountShards);
}

/**
 * Runs `fn` on every shard, concurrently and each isolated: a shard that fails is logged and does not
 * stop the others (cron tasks, retention). Answers how many failed.
 */
export async function eachShard(env: Env, task: string, fn: (shard: Shard) => Promise<unknown>): Promise<number> {
  const results = await Promise.allSettled(shardIndexes(env).map((i) => fn(shardAt(env, i))));
  let failed = 0;
  results.forEach((r, i) => {
    if (r.status === "rejected") {
      failed++;
      log.error("cron shard failed", { task, shard: i, error: String(r.reason) });
    }
  });
  return failed;
}
