import { abortAllDurableObjects, evictDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { getDb } from "../../src/db/client.ts";
import { accounts } from "../../src/db/schema/index.ts";
import { clearApiKeyCache } from "../../src/platform/api-keys.ts";
import type { RateLimiter } from "../../src/platform/rate-limiter.ts";
import type { LeaseRequest, RateLimitDecision } from "../../src/platform/sliding-window.ts";
import { api, createKey, errorOf, freshIp } from "./helpers.ts";

describe("rate limiting (RateLimiter Durable Object per key)", () => {
  it("free: 100 in a burst succeed counting 99..0, the 101st is 429 with Retry-After", async () => {
    const k = await createKey("free");
    for (let i = 0; i < 100; i++) {
      const res = await api("/api/account", { key: k.key });
      expect(res.status).toBe(200);
      expect(res.headers.get("X-RateLimit-Remaining")).toBe(String(99 - i));
    }
    const over = await api("/api/account", { key: k.key });
    expect(over.status).toBe(429);
    expect(Number(over.headers.get("Retry-After"))).toBeGreaterThan(0);
    expect(Number(over.headers.get("Retry-After"))).toBeLessThanOrEqual(60);
    expect(over.headers.get("X-RateLimit-Remaining")).toBe("0");
    expect((await errorOf(over)).code).toBe("rate_limited");
  });

  it("20 requests in flight at once against a limit of 10: exactly 10 succeed", async () => {
    const k = await createKey("enterprise", { limit: 10 });
    const statuses = await Promise.all(Array.from({ length: 20 }, () => api("/api/account", { key: k.key }).then((r) => r.status)));
    expect(statuses.filter((s) => s === 200)).toHaveLength(10);
    expect(statuses.filter((s) => s === 429)).toHaveLength(10);
  });

  it("keys of one account have budgets of their own", async () => {
    const a = await createKey("enterprise", { limit: 3 });
    const b = await createKey("enterprise", { accountId: a.accountId });
    for (let i = 0; i < 3; i++) expect((await api("/api/account", { key: a.key })).status).toBe(200);
    expect((await api("/api/account", { key: a.key })).status).toBe(429);
    expect((await api("/api/account", { key: b.key })).status).toBe(200);
  });

  it("pro gets 1000", async () => {
    const k = await createKey("pro");
    const res = await api("/api/account", { key: k.key });
    expect(res.headers.get("X-RateLimit-Limit")).toBe("1000");
  });

  it("a plan change applies once the cached lookup lapses", async () => {
    const k = await createKey("free");
    expect((await api("/api/account", { key: k.key })).headers.get("X-RateLimit-Limit")).toBe("100");
    await getDb(env.DB).update(accounts).set({ plan: "pro" }).where(eq(accounts.id, k.accountId));
    clearApiKeyCache();
    expect((await api("/api/account", { key: k.key })).headers.get("X-RateLimit-Limit")).toBe("1000");
  });
});

const limiterOf = (bucket: string) => env.RATE_LIMITER.getByName(bucket) as unknown as DurableObjectStub<RateLimiter>;
const lease = (bucket: string, req: Partial<LeaseRequest> & { limit: number }) => limiterOf(bucket).lease({ want: 1, holdMs: 2_000, giveBack: [], ...req }) as Promise<RateLimitDecision>;

describe("rate limiting survives the RateLimiter's eviction and restart", () => {
  it("a key's window is the same after its object is evicted: the limit is not handed out again", async () => {
    const k = await createKey("enterprise", { limit: 5 });
    for (let i = 0; i < 5; i++) expect((await api("/api/account", { key: k.key })).status).toBe(200);
    await evictDurableObject(limiterOf(`key:${k.keyId}`));
    const after = await api("/api/account", { key: k.key });
    expect(after.status).toBe(429);
    expect(after.headers.get("X-RateLimit-Remaining")).toBe("0");
  });

  it("a per-IP window is the same after every object is aborted (a crash or deploy)", async () => {
    const ip = freshIp();
    const limit = Number(env.UNAUTH_RATE_LIMIT_PER_MIN);
    for (let i = 0; i < limit; i++) expect((await api("/api/account", { ip })).status).toBe(401);
    await abortAllDurableObjects();
    expect((await api("/api/account", { ip })).status).toBe(429);
    expect((await api("/api/account", { ip: freshIp() })).status).toBe(401);
  });

  it("a lease gives back only what it holds: not slots used at once, not twice, not more than it was granted, also across a restart", async () => {
    const bucket = `test:${crypto.randomUUID()}`;
    // Limit 50: a lease holds at most 5 slots (a tenth), one of them used at once.
    const leased = await lease(bucket, { limit: 50, want: 5 });
    expect(leased).toMatchObject({ allowed: true, granted: 5 });
    for (let i = 0; i < 45; i++) expect((await lease(bucket, { limit: 50 })).allowed).toBe(true);
    expect((await lease(bucket, { limit: 50 })).allowed).toBe(false);
    // Every id this object could have issued, given back by a caller that holds none of them.
    const forged = Array.from({ length: 200 }, (_, i) => ({ leaseId: i + 1, n: 50 })).filter((g) => g.leaseId !== leased.leaseId);
    expect((await lease(bucket, { limit: 50, giveBack: forged })).allowed).toBe(false);
    await evictDurableObject(limiterOf(bucket));
    // The real lease, from before the restart, gives back its 4 held slots and no more.
    const back = await lease(bucket, { limit: 50, giveBack: [{ leaseId: leased.leaseId, n: 1000 }] });
    expect(back).toMatchObject({ allowed: true, remaining: 3 });
    expect((await lease(bucket, { limit: 50, giveBack: [{ leaseId: leased.leaseId, n: 4 }] })).remaining).toBe(2);
    // New ids after the restart never repeat an old one.
    const fresh = await lease(bucket, { limit: 50, want: 5 });
    expect(fresh.leaseId).toBeGreaterThan(leased.leaseId);
  });
});
