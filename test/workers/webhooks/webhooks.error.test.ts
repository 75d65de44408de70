import { describe, expect, it } from "vitest";
import { api, createKey, errorOf, registerWebhook } from "./support.ts";

const ok = { url: "https://example.com/hook", events: ["message.received"] };

describe("webhooks API: bad input is 400, never 5xx", () => {
  it.each([
    ["unknown event name", { ...ok, events: ["message.exploded"] }, "events.0"],
    ["empty event list", { ...ok, events: [] }, "events"],
    ["events not an array", { ...ok, events: "*" }, "events"],
    ["missing url", { events: ["*"] }, "url"],
    ["url not a string", { ...ok, url: 42 }, "url"],
    ["unknown field", { ...ok, secret: "whsec_mine" }, ""],
    ["enabled not boolean", { ...ok, enabled: "yes" }, "enabled"],
    ["description too long", { ...ok, description: "x".repeat(501) }, "description"],
  ])("POST: %s", async (_why, json, path) => {
    const k = await createKey();
    const res = await api("/api/webhooks", { method: "POST", key: k.key, json });
    expect(res.status).toBe(400);
    const err = await errorOf(res);
    expect(err.code).toBe("invalid_request");
    expect((err.details as { issues: { path: string }[] }).issues.map((i) => i.path)).toContain(path);
  });

  it("refuses a URL against the rules with 400 naming the url field", async () => {
    const k = await createKey();
    const res = await api("/api/webhooks", { method: "POST", key: k.key, json: { ...ok, url: "https://169.254.169.254/latest" } });
    expect(res.status).toBe(400);
    const err = await errorOf(res);
    expect(err.message).toMatch(/private or reserved/);
    expect((err.details as { issues: { path: string }[] }).issues).toEqual([{ path: "url", message: expect.stringMatching(/^URL /) }]);
  });

  it("PUT: unknown events, unknown fields, an empty body and a bad URL are 400", async () => {
    const k = await createKey();
    const hook = await registerWebhook(k);
    for (const json of [{ events: ["nope"] }, { rotate: true }, {}, { url: "http://10.0.0.1/" }, { rotateSecret: "yes" }]) {
      const res = await api(`/api/webhooks/${hook.id}`, { method: "PUT", key: k.key, json });
      expect(res.status, JSON.stringify(json)).toBe(400);
      expect((await errorOf(res)).code).toBe("invalid_request");
    }
  });

  it("malformed JSON is 400, non-JSON 415", async () => {
    const k = await createKey();
    const bad = await api("/api/webhooks", { method: "POST", key: k.key, body: "{", headers: { "Content-Type": "application/json" } });
    expect(bad.status).toBe(400);
    const text = await api("/api/webhooks", { method: "POST", key: k.key, body: "url=x", headers: { "Content-Type": "text/plain" } });
    expect(text.status).toBe(415);
  });

  it("unknown ids are 404; a bad cursor or status filter is 400", async () => {
    const k = await createKey();
    const hook = await registerWebhook(k);
    expect((await api("/api/webhooks/wh_nope", { key: k.key })).status).toBe(404);
    expect((await api("/api/webhooks/wh_nope/deliveries", { key: k.key })).status).toBe(404);
    expect((await api("/api/webhooks/wh_nope/test", { method: "POST", key: k.key })).status).toBe(404);
    expect((await api(`/api/webhooks/${hook.id}/deliveries/dlv_nope`, { key: k.key })).status).toBe(404);
    expect((await api(`/api/webhooks/${hook.id}/deliveries/dlv_nope/retry`, { method: "POST", key: k.key })).status).toBe(404);
    expect((await api(`/api/webhooks/${hook.id}/deliveries?cursor=%%%`, { key: k.key })).status).toBe(400);
    expect((await api(`/api/webhooks/${hook.id}/deliveries?status=lost`, { key: k.key })).status).toBe(400);
    expect((await api("/api/webhooks?limit=0", { key: k.key })).status).toBe(400);
  });

  it("without a key: 401", async () => {
    expect((await api("/api/webhooks")).status).toBe(401);
    expect((await api("/api/webhooks", { method: "POST", json: ok })).status).toBe(401);
  });

  it("Idempotency-Key on creation returns the first webhook (and secret), not a second one", async () => {
    const k = await createKey();
    const headers = { "Idempotency-Key": "create-hook-1" };
    const first = await api("/api/webhooks", { method: "POST", key: k.key, json: ok, headers });
    const again = await api("/api/webhooks", { method: "POST", key: k.key, json: ok, headers });
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.headers.get("Idempotent-Replayed")).toBe("true");
    expect(await again.json()).toEqual(await first.json());
    const list = (await (await api("/api/webhooks", { key: k.key })).json()) as { data: unknown[] };
    expect(list.data).toHaveLength(1);
  });
});
