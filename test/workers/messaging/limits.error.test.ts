// Session limits are validated at the edge: a bad value is a 400 naming the field, never a session with nonsense limits.
import { describe, expect, it } from "vitest";
import { api, createKey } from "../helpers.ts";
import { fakePhone, json } from "./support.ts";

describe("session limits: bad input", () => {
  it.each([
    [{ throughputPerSecond: 0 }, "limits.throughputPerSecond"],
    [{ throughputPerSecond: 1001 }, "limits.throughputPerSecond"],
    [{ pairIntervalMs: -5 }, "limits.pairIntervalMs"],
    [{ pairBurst: 1.5 }, "limits.pairBurst"],
    [{ messagingLimit: "lots" }, "limits.messagingLimit"],
    [{ messagingLimit: 1e12 }, "limits.messagingLimit"],
    [{ perDay: 3 }, "limits"],
  ])("sandbox %j: 400 at %s", async (limits, path) => {
    const k = await createKey("pro");
    const res = await api("/api/sessions", { method: "POST", key: k.key, json: { limits } });
    expect(res.status).toBe(400);
    const issues = (await json<{ error: { details: { issues: { path: string }[] } } }>(res)).error.details.issues;
    expect(issues.some((i) => i.path.startsWith(path))).toBe(true);
  });

  it("whatsapp: the messaging limit is one of Meta's tiers", async () => {
    const k = await createKey("pro");
    const phone = await fakePhone("t");
    const body = (messagingLimit: unknown) => ({ network: "whatsapp", limits: { messagingLimit }, whatsapp: { phoneNumberId: phone.phoneNumberId, accessToken: "t", appSecret: "s", verifyToken: "v" } });
    const bad = await api("/api/sessions", { method: "POST", key: k.key, json: body(300) });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(await bad.json())).toContain("limits.messagingLimit");
    expect((await api("/api/sessions", { method: "POST", key: k.key, json: body(2000) })).status).toBe(201);
    expect((await api("/api/sessions", { method: "POST", key: k.key, json: body("unlimited") })).status).toBe(201);
  });
});
