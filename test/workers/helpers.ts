import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { expect } from "vitest";
import { createApp } from "../../src/app.ts";
import { getDb } from "../../src/db/client.ts";
import { accounts, apiKeys } from "../../src/db/schema/index.ts";
import { generateApiKey, hashApiKey } from "../../src/platform/api-keys.ts";
import { newId } from "../../src/platform/ids.ts";
import type { Plan } from "../../src/platform/plans.ts";

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

/** A new account with one key, written straight to D1 (what the keys CLI does). */
export async function createKey(plan: Plan = "pro", opts: { limit?: number; accountId?: string } = {}): Promise<TestKey> {
  const db = getDb(env.DB);
  const now = Date.now();
  const accountId = opts.accountId ?? newId("acc");
  if (!opts.accountId) {
    await db.insert(accounts).values({ id: accountId, name: "test", plan, rateLimitPerMinute: opts.limit ?? null, createdAt: now });
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
