// The messaging limit per business portfolio, and limits changed after creation, on the sandbox: sessions of one
// account sharing a businessAccountId share one rolling-24h window of unique recipients (API sends, queued sends
// and a campaign's eta); a session without one keeps its own; PATCH changes limits at once, queued sends included.
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { sessionStub } from "../../../src/messaging/sessions/session-do.ts";
import { api, createKey } from "../helpers.ts";
import { action, createCampaign, getCampaign, importContacts, uniquePhone } from "../campaigns/support.ts";
import { approvedTemplate, eventsOf, json, SANDBOX_TEMPLATE, sandboxSession, waitFor, type MessageJson, type SessionJson } from "./support.ts";

type Batch = { total: number; pending: number; failed: number };

const template = async (key: string, sessionId: string, to: string) => json<MessageJson>(await api("/api/messages/send", { method: "POST", key, json: { sessionId, to, template: SANDBOX_TEMPLATE } }));
const outboxDue = (sessionId: string) => runInDurableObject(sessionStub(env, sessionId), (_o, state) => state.storage.sql.exec<{ message_id: string; due: number }>("SELECT message_id, due FROM outbox ORDER BY due").toArray());
const patch = (key: string, id: string, limits: Record<string, unknown>) => api(`/api/sessions/${id}`, { method: "PATCH", key, json: { limits } });

/** Three sessions of one account with a messaging limit of 2: two playing portfolio `waba`, one alone. */
async function portfolioSessions(key: string, waba: string, limit = 2) {
  const [a, b, solo] = await Promise.all([
    sandboxSession(key, { limits: { messagingLimit: limit }, sandbox: { businessAccountId: waba } }),
    sandboxSession(key, { limits: { messagingLimit: limit }, sandbox: { businessAccountId: waba } }),
    sandboxSession(key, { limits: { messagingLimit: limit } }),
  ]);
  await Promise.all([a, b, solo].map((s) => approvedTemplate(key, s.id)));
  return { a, b, solo };
}

describe("sandbox: the messaging limit per business portfolio", () => {
  it("API sends: a recipient reached by one session of the portfolio is free for the other; a new one waits for the shared window; a session alone keeps its own", async () => {
    const k = await createKey("pro");
    const { a, b, solo } = await portfolioSessions(k.key, "7001");
    expect((await template(k.key, a.id, "+14155553500")).status).toBe("sent");
    expect((await template(k.key, a.id, "+14155553501")).status).toBe("sent");
    expect((await template(k.key, b.id, "+14155553500")).status).toBe("sent");
    expect((await template(k.key, b.id, "+14155553502")).status).toBe("pending");
    const [waiting] = await outboxDue(b.id);
    expect(waiting!.due).toBeGreaterThan(Date.now() + 23 * 3600_000);
    // Free-form messages never count.
    expect((await json<MessageJson>(await api("/api/messages/send", { method: "POST", key: k.key, json: { sessionId: b.id, to: "+14155553503", text: "hi" } }))).status).toBe("sent");
    expect((await template(k.key, solo.id, "+14155553502")).status).toBe("sent");
    expect((await template(k.key, solo.id, "+14155553503")).status).toBe("sent");

    // The tier is the portfolio's: raised on a, b has it too and its waiting send goes; solo keeps its own.
    expect((await patch(k.key, a.id, { messagingLimit: 3 })).status).toBe(200);
    const limitOf = async (id: string) => (await json<SessionJson & { limits: { messagingLimit: unknown } }>(await api(`/api/sessions/${id}`, { key: k.key }))).limits.messagingLimit;
    expect(await limitOf(b.id)).toBe(3);
    expect(await limitOf(solo.id)).toBe(2);
    await waitFor(async () => (await outboxDue(b.id)).length === 0, 10_000, "b's waiting send sent");
    expect((await template(k.key, a.id, "+14155553504")).status).toBe("pending");
  });

  it("queued sends: one chunk of a bulk takes what is left of the shared window, the rest waits", async () => {
    const k = await createKey("pro");
    const { a, b } = await portfolioSessions(k.key, "7002", 3);
    expect((await template(k.key, a.id, "+14155553510")).status).toBe("sent");
    const res = await api("/api/messages/send-bulk", { method: "POST", key: k.key, json: { sessionId: b.id, messages: ["+14155553510", "+14155553511", "+14155553512", "+14155553513"].map((to) => ({ to, template: SANDBOX_TEMPLATE })) } });
    expect(res.status).toBe(202);
    const { batchId } = await json<{ batchId: string }>(res);
    // The recipient a reached is free; two new ones fill the window; the fourth waits.
    await waitFor(async () => (await json<Batch>(await api(`/api/messages/batches/${batchId}`, { key: k.key }))).pending === 1, 15_000, "three sent");
    const waiting = await outboxDue(b.id);
    expect(waiting).toHaveLength(1);
    expect(waiting[0]!.due).toBeGreaterThan(Date.now() + 23 * 3600_000);
  });

  it("a campaign's eta counts what the portfolio's other sessions used of the window", async () => {
    const k = await createKey("pro");
    const { a, b } = await portfolioSessions(k.key, "7003");
    expect((await template(k.key, a.id, "+14155553520")).status).toBe("sent");
    expect((await template(k.key, a.id, "+14155553521")).status).toBe("sent");
    await importContacts(k.key, Array.from({ length: 2 }, (_, i) => ({ phone: uniquePhone(), name: `P${i}`, tags: ["portfolio"] })));
    const c = await createCampaign(k.key, { sessionId: b.id, message: { template: SANDBOX_TEMPLATE }, audience: { tags: ["portfolio"] } });
    expect((await action(k.key, c.id, "start")).status).toBe(200);
    const running = await waitFor(async () => {
      const x = await getCampaign(k.key, c.id);
      return x.stats.pending === 2 && x.etaSeconds !== null && x.etaSeconds !== undefined ? x : undefined;
    }, 15_000, "both waiting, with an eta");
    expect(running.stats.sent + running.stats.delivered + running.stats.read).toBe(0);
    // B reached nobody itself, but a filled the portfolio's window: a day from a's sends.
    expect(running.etaSeconds!).toBeGreaterThan(23 * 3600);
  });
});

describe("sandbox: PATCH /api/sessions/:id limits", () => {
  it("changes the limits (GET shows them, session.updated carries them); the other fields stay", async () => {
    const k = await createKey("pro");
    const s = await sandboxSession(k.key, { limits: { throughputPerSecond: 5, messagingLimit: 10 } });
    const res = await patch(k.key, s.id, { throughputPerSecond: 1 });
    expect(res.status).toBe(200);
    const updated = await json<SessionJson>(res);
    expect(updated.limits).toEqual({ throughputPerSecond: 1, pairIntervalMs: null, pairBurst: null, messagingLimit: 10 });
    expect((await json<SessionJson>(await api(`/api/sessions/${s.id}`, { key: k.key }))).limits).toEqual(updated.limits);
    const event = await waitFor(() => eventsOf(k.accountId, "session.updated")[0], 10_000, "session.updated");
    expect(event.sessionId).toBe(s.id);
    expect((event.data as SessionJson).limits).toEqual(updated.limits);
  });

  it("a lower throughput takes effect for sends already queued", async () => {
    const k = await createKey("pro");
    const s = await sandboxSession(k.key, { limits: { throughputPerSecond: 3 } });
    const numbers = Array.from({ length: 8 }, (_, i) => `+1415555${String(3600 + i)}`);
    const res = await api("/api/messages/send-bulk", { method: "POST", key: k.key, json: { sessionId: s.id, messages: numbers.map((to) => ({ to, text: "q" })) } });
    const { batchId } = await json<{ batchId: string }>(res);
    const batch = async () => json<Batch>(await api(`/api/messages/batches/${batchId}`, { key: k.key }));
    await waitFor(async () => (await batch()).pending < 8, 15_000, "the first sent");
    expect((await patch(k.key, s.id, { throughputPerSecond: 1 })).status).toBe(200);
    const changedAt = Date.now();
    await waitFor(async () => (await batch()).pending === 0, 20_000, "all sent");
    const after: number[] = [];
    for (const n of numbers) {
      const page = await json<{ data: MessageJson[] }>(await api(`/api/messages/${n.slice(1)}@c.us?sessionId=${s.id}`, { key: k.key }));
      after.push(...page.data.map((m) => Date.parse(m.sentAt!)).filter((t) => t > changedAt));
    }
    expect(after.length).toBeGreaterThan(1);
    const perSecond = new Map<number, number>();
    for (const t of after) perSecond.set(Math.floor(t / 1000), (perSecond.get(Math.floor(t / 1000)) ?? 0) + 1);
    expect(Math.max(...perSecond.values())).toBe(1);
  });

  it("a raised messaging limit lets a send waiting for it through at once", async () => {
    const k = await createKey("pro");
    const s = await sandboxSession(k.key, { limits: { messagingLimit: 1 } });
    await approvedTemplate(k.key, s.id);
    expect((await template(k.key, s.id, "+14155553530")).status).toBe("sent");
    const waiting = await template(k.key, s.id, "+14155553531");
    expect(waiting.status).toBe("pending");
    expect((await patch(k.key, s.id, { messagingLimit: 2 })).status).toBe(200);
    await waitFor(async () => {
      const page = await json<{ data: MessageJson[] }>(await api(`/api/messages/${waiting.chatId}?sessionId=${s.id}`, { key: k.key }));
      return page.data.find((m) => m.id === waiting.id && m.status !== "pending");
    }, 10_000, "the waiting send sent");
    expect(await outboxDue(s.id)).toHaveLength(0);
  });
});

describe("sandbox: simulated standing (as Meta's account_update)", () => {
  it("restricted, then ok: the session's health follows; session.restricted for the first", async () => {
    const k = await createKey("pro");
    const s = await sandboxSession(k.key);
    const expiresAt = "2026-12-24T09:30:00.000Z";
    const res = await api(`/api/sessions/${s.id}/sandbox/health`, { method: "POST", key: k.key, json: { state: "restricted", restrictions: [{ type: "RESTRICTED_BIZ_INITIATED_MESSAGING", expiresAt }] } });
    expect(res.status).toBe(200);
    const restricted = await json<SessionJson & { health: { state: string; restrictions: unknown[] } }>(res);
    expect(restricted.health).toMatchObject({ state: "restricted", event: "ACCOUNT_RESTRICTION", restrictions: [{ type: "RESTRICTED_BIZ_INITIATED_MESSAGING", expiresAt }] });
    expect(restricted.status).toBe("WORKING");
    const event = await waitFor(() => eventsOf(k.accountId, "session.restricted")[0], 10_000, "session.restricted");
    expect((event.data as typeof restricted).health.state).toBe("restricted");
    const ok = await json<SessionJson & { health: { state: string } }>(await api(`/api/sessions/${s.id}/sandbox/health`, { method: "POST", key: k.key, json: { state: "ok" } }));
    expect(ok.health.state).toBe("ok");
    await waitFor(() => eventsOf(k.accountId, "session.updated")[0], 10_000, "session.updated for ok");
    expect((await json<SessionJson & { health: { state: string } }>(await api(`/api/sessions/${s.id}`, { key: k.key }))).health.state).toBe("ok");
  });
});
