import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { getDb } from "../../src/db/client.ts";
import { apiKeys } from "../../src/db/schema/index.ts";
import { clearApiKeyCache, hashApiKey } from "../../src/platform/api-keys.ts";
import { eq } from "drizzle-orm";
import { api, createKey, errorOf, freshIp } from "./helpers.ts";

const RATE_HEADERS = ["X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "RateLimit-Policy", "RateLimit"];

/** Every operation in /openapi.json with its path parameters filled in. */
async function documentedRoutes(): Promise<{ method: string; path: string }[]> {
  const doc = (await (await api("/openapi.json")).json()) as { paths: Record<string, Record<string, { security?: unknown[] }>> };
  const out: { method: string; path: string }[] = [];
  for (const [path, ops] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(ops)) {
      if (Array.isArray(op.security) && op.security.length === 0) continue; // public
      out.push({ method: method.toUpperCase(), path: path.replace(/\{[^}]+\}/g, "x_123") });
    }
  }
  return out;
}

describe("platform: security", () => {
  it("every documented authenticated route answers 401 (no key, malformed, unknown, revoked) with rate-limit headers", async () => {
    const revoked = await createKey();
    await getDb(env.DB).update(apiKeys).set({ revokedAt: Date.now() }).where(eq(apiKeys.id, revoked.keyId));
    clearApiKeyCache();
    const routes = await documentedRoutes();
    expect(routes.length).toBeGreaterThan(3);
    const variants: Record<string, string | undefined> = {
      none: undefined,
      malformed: "Token abc",
      unknown: "Bearer tmk_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
      revoked: `Bearer ${revoked.key}`,
    };
    for (const route of routes) {
      for (const [name, header] of Object.entries(variants)) {
        const headers: Record<string, string> = { "Content-Type": "application/json" };
        if (header) headers.Authorization = header;
        const res = await api(route.path, { method: route.method, headers, ip: freshIp(), body: ["POST", "PUT", "PATCH"].includes(route.method) ? "{}" : undefined });
        expect(res.status, `${route.method} ${route.path} (${name})`).toBe(401);
        expect((await errorOf(res)).code).toBe("unauthorized");
        for (const h of RATE_HEADERS) expect(res.headers.get(h), `${h} on ${route.method} ${route.path}`).not.toBeNull();
        expect(res.headers.get("X-Request-Id")).not.toBeNull();
      }
    }
  });

  it("requests without a valid key are limited per client IP", async () => {
    const ip = freshIp();
    const limit = Number(env.UNAUTH_RATE_LIMIT_PER_MIN);
    for (let i = 0; i < limit; i++) expect((await api("/api/account", { ip })).status).toBe(401);
    const res = await api("/api/account", { ip, headers: { Authorization: "Bearer tmk_guessguessguessguessguessguessgu" } });
    expect(res.status).toBe(429);
    expect(res.headers.get("Retry-After")).not.toBeNull();
    // Another IP is unaffected.
    expect((await api("/api/account", { ip: freshIp() })).status).toBe(401);
  });

  it("stores only a hash of the key, never the key", async () => {
    const k = await createKey();
    const row = await getDb(env.DB).select().from(apiKeys).where(eq(apiKeys.id, k.keyId)).get();
    expect(row!.hash).toBe(await hashApiKey(k.key));
    expect(JSON.stringify(row)).not.toContain(k.key);
  });

  it("a key cannot see or revoke another account's keys (404, nothing changes)", async () => {
    const a = await createKey();
    const b = await createKey();
    const res = await api(`/api/keys/${b.keyId}`, { method: "DELETE", key: a.key });
    expect(res.status).toBe(404);
    expect((await api("/api/account", { key: b.key })).status).toBe(200);
    const list = (await (await api("/api/keys", { key: a.key })).json()) as { data: { id: string }[] };
    expect(list.data.map((d) => d.id)).toEqual([a.keyId]);
  });

  it("a revoked key stops working once the isolate cache entry lapses", async () => {
    const k = await createKey();
    expect((await api("/api/account", { key: k.key })).status).toBe(200);
    await api(`/api/keys/${k.keyId}`, { method: "DELETE", key: k.key });
    clearApiKeyCache(); // stands in for the 30 s cache lifetime (tested for real end to end)
    expect((await api("/api/account", { key: k.key })).status).toBe(401);
  });
});
