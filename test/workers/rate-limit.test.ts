import { env } from "cloudflare:workers";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { getDb } from "../../src/db/client.ts";
import { accounts } from "../../src/db/schema/index.ts";
import { clearApiKeyCache } from "../../src/platform/api-keys.ts";
import { api, createKey, errorOf } from "./helpers.ts";

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
