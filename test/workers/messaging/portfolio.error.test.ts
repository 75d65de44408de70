// PATCH /api/sessions/:id limits, the sandbox's portfolio and simulated standing: bad input is a clear 4xx
// naming the field, never a session with nonsense limits; Meta's tiers move up one step at a time.
import { describe, expect, it } from "vitest";
import { api, createKey, errorOf } from "../helpers.ts";
import { APP_SECRET, VERIFY } from "./whatsapp-support.ts";
import { fakePhone, json, sandboxSession, type SessionJson } from "./support.ts";

type Limited = SessionJson & { limits: { throughputPerSecond: number | null; messagingLimit: number | "unlimited" } };
const patch = (key: string, id: string, body: unknown) => api(`/api/sessions/${id}`, { method: "PATCH", key, json: body });

async function whatsapp(key: string, messagingLimit?: number | "unlimited") {
  const phone = await fakePhone("token-abc");
  const res = await api("/api/sessions", { method: "POST", key, json: { network: "whatsapp", ...(messagingLimit ? { limits: { messagingLimit } } : {}), whatsapp: { phoneNumberId: phone.phoneNumberId, accessToken: phone.token, appSecret: APP_SECRET, verifyToken: VERIFY } } });
  expect(res.status).toBe(201);
  return json<Limited>(res);
}

describe("PATCH /api/sessions/:id: bad input", () => {
  it.each([
    [{ limits: { throughputPerSecond: 0 } }, "limits.throughputPerSecond"],
    [{ limits: { pairBurst: 1.5 } }, "limits.pairBurst"],
    [{ limits: { messagingLimit: -1 } }, "limits.messagingLimit"],
    [{ limits: { messagingLimit: "lots" } }, "limits.messagingLimit"],
    [{ limits: { perDay: 3 } }, "limits"],
    [{}, "limits"],
    [{ limits: {}, name: "x" }, ""],
  ])("%j: 400 at %s", async (body, path) => {
    const k = await createKey("pro");
    const s = await sandboxSession(k.key, { limits: { throughputPerSecond: 5 } });
    const res = await patch(k.key, s.id, body);
    expect(res.status).toBe(400);
    const issues = (await json<{ error: { details: { issues: { path: string }[] } } }>(res)).error.details.issues;
    expect(issues.some((i) => i.path.startsWith(path))).toBe(true);
    expect((await json<Limited>(await api(`/api/sessions/${s.id}`, { key: k.key }))).limits.throughputPerSecond).toBe(5);
  });

  it("not JSON: 415; no such session: 404; a stopped session: 409 session_stopped", async () => {
    const k = await createKey("pro");
    const s = await sandboxSession(k.key);
    expect((await api(`/api/sessions/${s.id}`, { method: "PATCH", key: k.key, body: "limits=1", headers: { "Content-Type": "text/plain" } })).status).toBe(415);
    expect((await patch(k.key, "ses_doesnotexist000000000", { limits: { throughputPerSecond: 1 } })).status).toBe(404);
    expect((await api(`/api/sessions/${s.id}`, { method: "DELETE", key: k.key })).status).toBe(200);
    const stopped = await patch(k.key, s.id, { limits: { throughputPerSecond: 1 } });
    expect(stopped.status).toBe(409);
    expect((await errorOf(stopped)).code).toBe("session_stopped");
  });

  it("whatsapp: only Meta's tiers, raised one step at a time (lowered to any)", async () => {
    const k = await createKey("pro");
    const s = await whatsapp(k.key);
    const notTier = await patch(k.key, s.id, { limits: { messagingLimit: 300 } });
    expect(notTier.status).toBe(400);
    expect(JSON.stringify(await notTier.json())).toContain("limits.messagingLimit");
    const skip = await patch(k.key, s.id, { limits: { messagingLimit: 10000 } });
    expect(skip.status).toBe(422);
    expect(await errorOf(skip)).toMatchObject({ code: "tier_skip" });
    expect((await patch(k.key, s.id, { limits: { messagingLimit: "unlimited" } })).status).toBe(422);
    expect((await patch(k.key, s.id, { limits: { messagingLimit: 2000 } })).status).toBe(200);
    expect((await patch(k.key, s.id, { limits: { messagingLimit: 10000 } })).status).toBe(200);
    const down = await patch(k.key, s.id, { limits: { messagingLimit: 250 } });
    expect(down.status).toBe(200);
    expect((await json<Limited>(down)).limits.messagingLimit).toBe(250);
    const top = await whatsapp(k.key, 100000);
    expect((await patch(k.key, top.id, { limits: { messagingLimit: "unlimited" } })).status).toBe(200);
  });
});

describe("the sandbox's portfolio and standing: bad input", () => {
  it("sandbox.businessAccountId is digits, and only for network sandbox", async () => {
    const k = await createKey("pro");
    expect((await api("/api/sessions", { method: "POST", key: k.key, json: { sandbox: { businessAccountId: "abc" } } })).status).toBe(400);
    expect((await api("/api/sessions", { method: "POST", key: k.key, json: { sandbox: { businessAccountId: "1".repeat(31) } } })).status).toBe(400);
    const phone = await fakePhone("token-abc");
    const res = await api("/api/sessions", { method: "POST", key: k.key, json: { network: "whatsapp", sandbox: { businessAccountId: "1" }, whatsapp: { phoneNumberId: phone.phoneNumberId, accessToken: phone.token, appSecret: APP_SECRET, verifyToken: VERIFY } } });
    expect(res.status).toBe(400);
    expect(JSON.stringify(await res.json())).toContain("sandbox");
  });

  it.each([
    [{ state: "frozen" }],
    [{ state: "restricted", restrictions: [{ type: "X", expiresAt: "tomorrow" }] }],
    [{ state: "restricted", restrictions: Array.from({ length: 21 }, () => ({ type: "X", expiresAt: null })) }],
    [{ state: "violation", violation: "v".repeat(129) }],
    [{ state: "ok", extra: 1 }],
  ])("health %j: 400", async (body) => {
    const k = await createKey("pro");
    const s = await sandboxSession(k.key);
    expect((await api(`/api/sessions/${s.id}/sandbox/health`, { method: "POST", key: k.key, json: body })).status).toBe(400);
    expect((await json<Limited & { health: unknown }>(await api(`/api/sessions/${s.id}`, { key: k.key }))).health).toBeNull();
  });

  it("health of a whatsapp session (Meta says it, not the API) or of no session: 404", async () => {
    const k = await createKey("pro");
    const s = await whatsapp(k.key);
    expect((await api(`/api/sessions/${s.id}/sandbox/health`, { method: "POST", key: k.key, json: { state: "banned" } })).status).toBe(404);
    expect((await api(`/api/sessions/ses_doesnotexist000000000/sandbox/health`, { method: "POST", key: k.key, json: { state: "banned" } })).status).toBe(404);
  });
});
