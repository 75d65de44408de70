import { describe, expect, it } from "vitest";
import { api, createKey, errorOf, registerWebhook } from "./support.ts";

const url = "http://127.0.0.1:9/hook";

describe("webhook throttle: errors", () => {
  it.each([
    ["0", 0],
    ["over 1,000", 1001],
    ["negative", -5],
    ["fractional", 2.5],
    ["a string", "10"],
    ["huge", 1e308],
    ["an object", { perSecond: 10 }],
  ])("400 for maxPerSecond %s, on create and on update", async (_what, maxPerSecond) => {
    const k = await createKey();
    const created = await api("/api/webhooks", { method: "POST", key: k.key, json: { url, events: ["*"], maxPerSecond } });
    expect(created.status).toBe(400);
    expect((await errorOf(created)).code).toBe("invalid_request");
    const hook = await registerWebhook(k);
    const updated = await api(`/api/webhooks/${hook.id}`, { method: "PUT", key: k.key, json: { maxPerSecond } });
    expect(updated.status).toBe(400);
    expect(((await (await api(`/api/webhooks/${hook.id}`, { key: k.key })).json()) as { maxPerSecond: unknown }).maxPerSecond).toBeNull();
  });

  it("accepts the bounds 1 and 1,000", async () => {
    const k = await createKey();
    for (const maxPerSecond of [1, 1000]) {
      const res = await api("/api/webhooks", { method: "POST", key: k.key, json: { url, events: ["*"], maxPerSecond } });
      expect(res.status).toBe(201);
      expect(await res.json()).toMatchObject({ maxPerSecond });
    }
  });
});
