import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { api, createKey, errorOf } from "./helpers.ts";

describe("platform: errors", () => {
  it("unknown route is 404 with the error body", async () => {
    const k = await createKey();
    const res = await api("/api/nope", { key: k.key });
    expect(res.status).toBe(404);
    expect(res.headers.get("Content-Type")).toContain("application/json");
    expect((await errorOf(res)).code).toBe("not_found");
    // Outside the API prefixes a GET is the browser console's page (test/workers/console.test.ts).
    expect((await api("/v1/nowhere", { key: k.key })).status).toBe(404);
  });

  it("wrong method is 405 with Allow", async () => {
    const k = await createKey();
    const res = await api("/api/account", { method: "DELETE", key: k.key });
    expect(res.status).toBe(405);
    expect(res.headers.get("Allow")).toContain("GET");
    expect((await errorOf(res)).code).toBe("method_not_allowed");
  });

  it("malformed JSON is 400 invalid_request", async () => {
    const k = await createKey();
    const res = await api("/api/keys", { method: "POST", key: k.key, body: "{not json", headers: { "Content-Type": "application/json" } });
    expect(res.status).toBe(400);
    expect((await errorOf(res)).code).toBe("invalid_request");
  });

  it("wrong types, missing and unknown fields are 400 naming each field", async () => {
    const k = await createKey();
    const wrong = await errorOf(await api("/api/keys", { method: "POST", key: k.key, json: { name: 42 } }));
    expect(wrong.code).toBe("invalid_request");
    expect((wrong.details as { issues: { path: string }[] }).issues.map((i) => i.path)).toContain("name");
    const missing = await errorOf(await api("/api/keys", { method: "POST", key: k.key, json: {} }));
    expect((missing.details as { issues: { path: string }[] }).issues.map((i) => i.path)).toContain("name");
    const unknown = await api("/api/keys", { method: "POST", key: k.key, json: { name: "x", admin: true } });
    expect(unknown.status).toBe(400);
    const issues = ((await errorOf(unknown)).details as { issues: { message: string }[] }).issues;
    expect(issues.some((i) => i.message.includes("admin"))).toBe(true);
  });

  it("wrong content type is 415; oversized body is 413", async () => {
    const k = await createKey();
    const form = await api("/api/keys", { method: "POST", key: k.key, body: "name=x", headers: { "Content-Type": "application/x-www-form-urlencoded" } });
    expect(form.status).toBe(415);
    expect((await errorOf(form)).code).toBe("unsupported_media_type");
    const big = await api("/api/keys", { method: "POST", key: k.key, json: { name: "x".repeat(1024 * 1024 + 10) } });
    expect(big.status).toBe(413);
    expect((await errorOf(big)).code).toBe("payload_too_large");
  });

  it("bad query values are 400, never 5xx", async () => {
    const k = await createKey();
    expect((await api("/api/keys?limit=0", { key: k.key })).status).toBe(400);
    expect((await api("/api/keys?limit=101", { key: k.key })).status).toBe(400);
    expect((await api("/api/keys?limit=abc", { key: k.key })).status).toBe(400);
    expect((await api("/api/keys?cursor=%%%garbage", { key: k.key })).status).toBe(400);
  });

  it("an unknown API-Version is 400; a known one is echoed", async () => {
    const k = await createKey();
    const bad = await api("/api/account", { key: k.key, headers: { "API-Version": "1999-01-01" } });
    expect(bad.status).toBe(400);
    const good = await api("/api/account", { key: k.key, headers: { "API-Version": "2026-11-01" } });
    expect(good.headers.get("API-Version")).toBe("2026-11-01");
  });

  it("random JSON thrown at a validated route never gets a 5xx (property)", async () => {
    const k = await createKey("enterprise", { limit: 100_000 });
    await fc.assert(
      fc.asyncProperty(fc.jsonValue(), async (value) => {
        const res = await api("/api/keys", { method: "POST", key: k.key, body: JSON.stringify(value), headers: { "Content-Type": "application/json" } });
        expect(res.status).toBeLessThan(500);
        expect([201, 400]).toContain(res.status);
        const body = (await res.json()) as Record<string, unknown>;
        if (res.status === 400) expect(body).toHaveProperty("error.code", "invalid_request");
      }),
      { numRuns: 150 },
    );
  });

  it("random bytes as a body never get a 5xx (property)", async () => {
    const k = await createKey("enterprise", { limit: 100_000 });
    await fc.assert(
      fc.asyncProperty(fc.string({ maxLength: 200 }), async (text) => {
        const res = await api("/api/keys", { method: "POST", key: k.key, body: text, headers: { "Content-Type": "application/json" } });
        expect(res.status).toBeLessThan(500);
      }),
      { numRuns: 100 },
    );
  });
});
