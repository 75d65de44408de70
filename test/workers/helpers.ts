import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { expect } from "vitest";
import { createApp } from "../../src/app.ts";
import { getDb } from "../../src/db/client.ts";
import { accounts, apiKeys } from "../../src/db/schema/index.ts";
import { generateApiKey, hashApiKey } from "../../src/platform/api-keys.ts";
import { newId } from "../../src/platform/ids.ts";
import type { Plan } from "../../src/platform/plans.ts";
import { accountShard, newAccountShard, shardIndexes } from "../../src/platform/shards.ts";

/** The raw D1 of an account's shard (its messaging and events rows), for tests that read rows directly. */
export async function shardD1(accountId: string): Promise<D1Database> {
  const index = (await accountShard(env, accountId)).index;
  return env[`SHARD_${index}` as "SHARD_0"];
}

/** Every shard's raw D1, for tests of work that spans accounts (cron, consumers). */
export function allShardD1s(): D1Database[] {
  return shardIndexes(env).map((i) => env[`SHARD_${i}` as "SHARD_0"]);
}

export interface TestKey {
  key: string;
  keyId: string;
  accountId: string;
}

let ipCounter = 0;
/** A fresh client IP, so per-IP limits of one test do not spill into another. */
export function freshIp(): string {
  ipCounter++;
  return `198.51.${(ipCounter >> 8) & 255}.${ipCounter & 255}`;
}

/**
 * A new account with one key, written straight to D1 (what the keys CLI does): on the shard
 * NEW_ACCOUNT_SHARDS picks for its id, or on `opts.shard`.
 */
export async function createKey(plan: Plan = "pro", opts: { limit?: number; accountId?: string; shard?: number } = {}): Promise<TestKey> {
  const db = getDb(env.DB);
  const now = Date.now();
  const accountId = opts.accountId ?? newId("acc");
  if (!opts.accountId) {
    const shard = opts.shard ?? newAccountShard(env, accountId);
    await db.insert(accounts).values({ id: accountId, name: "test", plan, rateLimitPerMinute: opts.limit ?? null, shard, createdAt: now });
  }
  const { key, prefix } = generateApiKey();
  const keyId = newId("key");
  await db.insert(apiKeys).values({ id: keyId, accountId, name: "test", prefix, hash: await hashApiKey(key), createdAt: now });
  return { key, keyId, accountId };
}

export type ApiInit = RequestInit & { key?: string; json?: unknown; ip?: string };

function clientRequest(path: string, init: ApiInit): Request {
  const headers = new Headers(init.headers);
  if (init.key) headers.set("Authorization", `Bearer ${init.key}`);
  headers.set("CF-Connecting-IP", init.ip ?? "203.0.113.1");
  let body = init.body;
  if (init.json !== undefined) {
    headers.set("Content-Type", "application/json");
    body = JSON.stringify(init.json);
  }
  return new Request(`http://api.test${path}`, { ...init, headers, body });
}

/** A request to the Worker as a client would make it. */
export function api(path: string, init: ApiInit = {}): Promise<Response> {
  return (exports as unknown as { default: Fetcher }).default.fetch(clientRequest(path, init));
}

/** The same request to the app with some bindings replaced (e.g. a compiler that is down); same D1 and R2. */
export async function apiWith(overrides: Partial<Env>, path: string, init: ApiInit = {}): Promise<Response> {
  const ctx = createExecutionContext();
  const res = await createApp().fetch(clientRequest(path, init), { ...env, ...overrides }, ctx);
  await waitOnExecutionContext(ctx);
  return res;
}

/**
 * Sends a request with an `Idempotency-Key` twice: the first answer must have `status`, the second
 * must be its replay (same status, `Idempotent-Replayed: true`). Both bodies, parsed.
 */
export async function sentTwice<T>(send: () => Promise<Response>, status: number): Promise<{ first: T; replay: T }> {
  const first = await send();
  expect(first.status).toBe(status);
  const firstBody = (await first.json()) as T;
  const replay = await send();
  expect(replay.status).toBe(status);
  expect(replay.headers.get("Idempotent-Replayed")).toBe("true");
  return { first: firstBody, replay: (await replay.json()) as T };
}

export async function errorOf(res: Response): Promise<{ code: string; message: string; [k: string]: unknown }> {
  const body = (await res.json()) as { error: { code: string; message: string } };
  return body.error;
}

/** The drizzle client of an account's shard. */
export async function shardDb(accountId: string) {
  return getDb(await shardD1(accountId));
}

/**
 * A read over every shard, for tests that know a row's id but not its account: the first row any
 * shard has (ids are unique across shards).
 */
export async function firstOnShards<T>(sql: string, ...binds: unknown[]): Promise<T | null> {
  for (const d1 of allShardD1s()) {
    const row = await d1.prepare(sql).bind(...binds).first<T>();
    if (row !== null) return row;
  }
  return null;
}

/** `SELECT count(*) AS n ...` summed over every shard. */
export async function countOnShards(sql: string, ...binds: unknown[]): Promise<number> {
  let n = 0;
  for (const d1 of allShardD1s()) n += (await d1.prepare(sql).bind(...binds).first<{ n: number }>())?.n ?? 0;
  return n;
}
