import { describe, expect, it } from "vitest";
import { api, createKey } from "./helpers.ts";

describe("platform: happy path", () => {
  it("GET /health answers 200 with the version and a request id, without a key", async () => {
    const res = await api("/health");
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ status: "ok", version: expect.any(String) });
    expect(res.headers.get("X-Request-Id")).toMatch(/^req_/);
  });

  it("Server-Timing shows where an authenticated request's time went", async () => {
    const k = await createKey("free");
    const res = await api("/api/account", { key: k.key });
    expect(res.headers.get("Server-Timing")).toMatch(/^auth;dur=\d+, ratelimit;dur=\d+, total;dur=\d+$/);
    expect((await api("/health")).headers.get("Server-Timing")).toMatch(/^total;dur=\d+$/);
  });

  it("echoes a sane incoming X-Request-Id", async () => {
    const res = await api("/health", { headers: { "X-Request-Id": "abc-123" } });
    expect(res.headers.get("X-Request-Id")).toBe("abc-123");
  });

  it("GET /api/account resolves the key to its account and plan", async () => {
    const k = await createKey("pro");
    const res = await api("/api/account", { key: k.key });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ id: k.accountId, plan: "pro", rateLimitPerMinute: 1000 });
    expect(res.headers.get("API-Version")).toBe("2026-11-01");
    expect(res.headers.get("X-RateLimit-Limit")).toBe("1000");
    expect(res.headers.get("X-RateLimit-Remaining")).toBe("999");
    expect(res.headers.get("RateLimit-Policy")).toBe('"default";q=1000;w=60');
  });

  it("enterprise accounts get their own limit", async () => {
    const k = await createKey("enterprise", { limit: 5000 });
    const res = await api("/api/account", { key: k.key });
    expect(res.headers.get("X-RateLimit-Limit")).toBe("5000");
  });

  it("creates, lists (paginated) and revokes keys; the secret is shown once", async () => {
    const k = await createKey("pro"); // four keys: over the Free plan's three
    const created: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await api("/api/keys", { method: "POST", key: k.key, json: { name: `k${i}` } });
      expect(res.status).toBe(201);
      const body = (await res.json()) as { id: string; key: string; prefix: string };
      expect(body.key.startsWith(body.prefix)).toBe(true);
      created.push(body.id);
    }
    const page1 = (await (await api("/api/keys?limit=2", { key: k.key })).json()) as { data: { id: string; key?: string }[]; nextCursor: string };
    expect(page1.data).toHaveLength(2);
    expect(page1.data.every((d) => d.key === undefined)).toBe(true);
    const page2 = (await (await api(`/api/keys?limit=2&cursor=${page1.nextCursor}`, { key: k.key })).json()) as { data: { id: string }[]; nextCursor: string | null };
    expect(page2.data).toHaveLength(2);
    expect(page2.nextCursor).toBeNull();
    expect(new Set([...page1.data, ...page2.data].map((d) => d.id)).size).toBe(4);
    const del = await api(`/api/keys/${created[0]}`, { method: "DELETE", key: k.key });
    expect(del.status).toBe(200);
    expect(((await del.json()) as { revokedAt: string | null }).revokedAt).not.toBeNull();
  });

  it("serves the OpenAPI 3.1 document and the docs page", async () => {
    const doc = (await (await api("/openapi.json")).json()) as { openapi: string; paths: Record<string, unknown>; components: { securitySchemes: Record<string, unknown> } };
    expect(doc.openapi).toBe("3.1.0");
    expect(Object.keys(doc.paths)).toContain("/api/account");
    expect(doc.components.securitySchemes.bearerAuth).toBeDefined();
    const docs = await api("/docs");
    expect(docs.status).toBe(200);
    expect(await docs.text()).toContain('src="/docs/init.js"');
    // the viewer's start-up script (a file: the page forbids inline scripts) loads this document
    expect(await (await api("/docs/init.js")).text()).toContain("/openapi.json");
  });
});
