// Accounts are adversaries: a portfolio's window is the account's (another account naming the same
// businessAccountId shares nothing), and one account cannot change or see another's session limits or standing.
import { describe, expect, it } from "vitest";
import { api, createKey } from "../helpers.ts";
import { approvedTemplate, eventsOf, json, SANDBOX_TEMPLATE, sandboxSession, waitFor, type MessageJson, type SessionJson } from "./support.ts";

type Limited = SessionJson & { limits: { throughputPerSecond: number | null; messagingLimit: number | "unlimited" } };

const template = async (key: string, sessionId: string, to: string) => json<MessageJson>(await api("/api/messages/send", { method: "POST", key, json: { sessionId, to, template: SANDBOX_TEMPLATE } }));

describe("portfolios and limits across accounts", () => {
  it("two accounts naming the same businessAccountId do not share a window", async () => {
    const mallory = await createKey("pro");
    const victim = await createKey("pro");
    const m = await sandboxSession(mallory.key, { limits: { messagingLimit: 1 }, sandbox: { businessAccountId: "424242" } });
    const v = await sandboxSession(victim.key, { limits: { messagingLimit: 1 }, sandbox: { businessAccountId: "424242" } });
    await Promise.all([approvedTemplate(mallory.key, m.id), approvedTemplate(victim.key, v.id)]);
    // Mallory fills "the" portfolio's window.
    expect((await template(mallory.key, m.id, "+14155553700")).status).toBe("sent");
    expect((await template(mallory.key, m.id, "+14155553701")).status).toBe("pending");
    // The victim's window is its own.
    expect((await template(victim.key, v.id, "+14155553702")).status).toBe("sent");
    // And so is its tier: Mallory raising "the" portfolio's changes only Mallory's sessions.
    expect((await api(`/api/sessions/${m.id}`, { method: "PATCH", key: mallory.key, json: { limits: { messagingLimit: 50 } } })).status).toBe(200);
    expect((await json<Limited>(await api(`/api/sessions/${v.id}`, { key: victim.key }))).limits.messagingLimit).toBe(1);
    expect(eventsOf(victim.accountId, "session.updated")).toHaveLength(0);
  });

  it("another account's session: PATCH and simulated standing are 404 and change nothing; no event reaches the other account", async () => {
    const mallory = await createKey("pro");
    const victim = await createKey("pro");
    const v = await sandboxSession(victim.key, { limits: { throughputPerSecond: 10 } });
    expect((await api(`/api/sessions/${v.id}`, { method: "PATCH", key: mallory.key, json: { limits: { throughputPerSecond: 1 } } })).status).toBe(404);
    expect((await api(`/api/sessions/${v.id}/sandbox/health`, { method: "POST", key: mallory.key, json: { state: "banned" } })).status).toBe(404);
    const after = await json<Limited & { health: unknown }>(await api(`/api/sessions/${v.id}`, { key: victim.key }));
    expect(after.limits.throughputPerSecond).toBe(10);
    expect(after.health).toBeNull();
    // The victim's own change is seen by the victim only.
    expect((await api(`/api/sessions/${v.id}`, { method: "PATCH", key: victim.key, json: { limits: { throughputPerSecond: 2 } } })).status).toBe(200);
    await waitFor(() => eventsOf(victim.accountId, "session.updated")[0], 10_000, "the victim's session.updated");
    expect(eventsOf(mallory.accountId, "session.updated")).toHaveLength(0);
  });

  it("without a key, PATCH is 401; a huge body is refused before it is parsed", async () => {
    const k = await createKey("pro");
    const s = await sandboxSession(k.key);
    expect((await api(`/api/sessions/${s.id}`, { method: "PATCH", json: { limits: { throughputPerSecond: 1 } } })).status).toBe(401);
    const huge = await api(`/api/sessions/${s.id}`, { method: "PATCH", key: k.key, json: { limits: { throughputPerSecond: 1 }, pad: "x".repeat(2_000_000) } });
    expect([400, 413]).toContain(huge.status);
    const health = await api(`/api/sessions/${s.id}/sandbox/health`, { method: "POST", key: k.key, json: { state: "restricted", restrictions: [{ type: "x".repeat(2_000_000), expiresAt: null }] } });
    expect([400, 413]).toContain(health.status);
  });
});
