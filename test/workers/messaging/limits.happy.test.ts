// Sending limits on the sandbox network, with small values: each limit holds sends back (queued, not
// refused), a single send over the pair rate answers 429, and a campaign over the messaging limit says when it finishes.
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { sessionStub } from "../../../src/messaging/sessions/session-do.ts";
import { api, createKey } from "../helpers.ts";
import { action, createCampaign, getCampaign, importContacts, uniquePhone } from "../campaigns/support.ts";
import { approvedTemplate, json, SANDBOX_TEMPLATE, sandboxSession, waitFor, type MessageJson } from "./support.ts";

type Batch = { total: number; pending: number; failed: number };

async function bulk(key: string, sessionId: string, messages: Record<string, unknown>[]): Promise<() => Promise<Batch>> {
  const res = await api("/api/messages/send-bulk", { method: "POST", key, json: { sessionId, messages } });
  expect(res.status).toBe(202);
  const { batchId } = await json<{ batchId: string }>(res);
  return async () => json<Batch>(await api(`/api/messages/batches/${batchId}`, { key }));
}

async function sentTimes(key: string, sessionId: string, chatIds: string[]): Promise<number[]> {
  const all: number[] = [];
  for (const chat of chatIds) {
    const page = await json<{ data: MessageJson[] }>(await api(`/api/messages/${chat}?sessionId=${sessionId}&limit=100`, { key }));
    all.push(...page.data.filter((m) => m.direction === "outbound").map((m) => Date.parse(m.sentAt!)));
  }
  return all.sort((a, b) => a - b);
}

const outboxDue = (sessionId: string) =>
  runInDurableObject(sessionStub(env, sessionId), (_o, state) => state.storage.sql.exec<{ message_id: string; due: number }>("SELECT message_id, due FROM outbox ORDER BY due").toArray());

describe("sandbox: sending limits", () => {
  it("throughput: no more than N sends in any second; a single send over it is answered pending and sent the next second", async () => {
    const k = await createKey("pro");
    const s = await sandboxSession(k.key, { limits: { throughputPerSecond: 2 } });
    // The session says what it applies: its own setting, and the sandbox's defaults (none) for the rest.
    expect(s.limits).toEqual({ throughputPerSecond: 2, pairIntervalMs: null, pairBurst: null, messagingLimit: "unlimited" });
    const numbers = Array.from({ length: 6 }, (_, i) => `+1415555${String(3100 + i)}`);
    const batch = await bulk(k.key, s.id, numbers.map((to) => ({ to, text: "t" })));
    await waitFor(async () => (await batch()).pending === 0, 15_000, "all six sent");
    const times = await sentTimes(k.key, s.id, numbers.map((n) => `${n.slice(1)}@c.us`));
    const perSecond = new Map<number, number>();
    for (const t of times) perSecond.set(Math.floor(t / 1000), (perSecond.get(Math.floor(t / 1000)) ?? 0) + 1);
    expect(Math.max(...perSecond.values())).toBeLessThanOrEqual(2);
    expect(times.at(-1)! - times[0]!).toBeGreaterThanOrEqual(1000);

    // Three at once: two go, the third waits in the outbox for the next second.
    const answers = await Promise.all(["+14155553200", "+14155553201", "+14155553202"].map((to) => api("/api/messages/send", { method: "POST", key: k.key, json: { sessionId: s.id, to, text: "now" } }).then((r) => json<MessageJson>(r))));
    const pending = answers.filter((m) => m.status === "pending");
    expect(answers.every((m) => m.status === "pending" || m.status === "sent")).toBe(true);
    for (const p of pending) {
      await waitFor(async () => {
        const page = await json<{ data: MessageJson[] }>(await api(`/api/messages/${p.chatId}?sessionId=${s.id}`, { key: k.key }));
        return page.data.find((m) => m.id === p.id && m.status !== "pending");
      }, 10_000, "the waiting send sent");
    }
  });

  it("pair rate: a burst to one recipient, then one per interval; a single send over it answers 429 with Retry-After", async () => {
    const k = await createKey("pro");
    const s = await sandboxSession(k.key, { limits: { pairIntervalMs: 700, pairBurst: 2 } });
    const send = () => api("/api/messages/send", { method: "POST", key: k.key, json: { sessionId: s.id, to: "+14155553300", text: "hi" } });
    expect((await send()).status).toBe(201);
    expect((await send()).status).toBe(201);
    const over = await send();
    expect(over.status).toBe(429);
    expect(Number(over.headers.get("Retry-After"))).toBeGreaterThanOrEqual(1);
    expect(((await over.json()) as { error: { code: string } }).error.code).toBe("pair_rate_limited");
    // Another recipient is not held back.
    expect((await api("/api/messages/send", { method: "POST", key: k.key, json: { sessionId: s.id, to: "+14155553301", text: "hi" } })).status).toBe(201);

    // Queued sends to one recipient wait their turn instead: four to a fresh one, the burst of two and then one per 700 ms.
    const batch = await bulk(k.key, s.id, Array.from({ length: 4 }, (_, i) => ({ to: "+14155553302", text: `q${i}` })));
    await waitFor(async () => (await batch()).pending === 0, 15_000, "the queued four sent");
    const times = await sentTimes(k.key, s.id, ["14155553302@c.us"]);
    expect(times[3]! - times[0]!).toBeGreaterThanOrEqual(2 * 700 - 100);
  });

  it("messaging limit: templates to new recipients past the limit wait a rolling 24 h; free-form and known recipients do not count", { timeout: 60_000 }, async () => {
    const k = await createKey("pro");
    const s = await sandboxSession(k.key, { limits: { messagingLimit: 2 } });
    await approvedTemplate(k.key, s.id);
    const batch = await bulk(k.key, s.id, [
      { to: "+14155553400", template: SANDBOX_TEMPLATE },
      { to: "+14155553401", template: SANDBOX_TEMPLATE },
      { to: "+14155553400", template: SANDBOX_TEMPLATE },
      { to: "+14155553402", text: "free-form" },
      { to: "+14155553403", template: SANDBOX_TEMPLATE },
    ]);
    // Its progress goes into the failure (runs on a fresh clone have waited out 15 s here).
    let seen: unknown;
    await waitFor(async () => ((seen = await batch()) as { pending: number }).pending === 1, 30_000, "four sent").catch((err: Error) => {
      throw new Error(`${err.message}; the batch: ${JSON.stringify(seen)}`);
    });
    expect(await batch()).toMatchObject({ total: 5, pending: 1, failed: 0 });
    const waiting = await outboxDue(s.id);
    expect(waiting).toHaveLength(1);
    expect(waiting[0]!.due).toBeGreaterThan(Date.now() + 23 * 3600_000);
    // A single template to another new recipient is queued too, answered pending.
    const single = await json<MessageJson>(await api("/api/messages/send", { method: "POST", key: k.key, json: { sessionId: s.id, to: "+14155553404", template: SANDBOX_TEMPLATE } }));
    expect(single.status).toBe("pending");
    expect(await outboxDue(s.id)).toHaveLength(2);
  });

  it("a campaign over what is left of the messaging limit waits, and its eta says when it will finish", async () => {
    const k = await createKey("pro");
    const s = await sandboxSession(k.key, { limits: { messagingLimit: 2 } });
    await approvedTemplate(k.key, s.id);
    await importContacts(k.key, Array.from({ length: 5 }, (_, i) => ({ phone: uniquePhone(), name: `C${i}`, tags: ["tier"] })));
    const c = await createCampaign(k.key, { sessionId: s.id, message: { template: SANDBOX_TEMPLATE }, audience: { tags: ["tier"] } });
    expect((await action(k.key, c.id, "start")).status).toBe(200);
    const running = await waitFor(async () => {
      const x = await getCampaign(k.key, c.id);
      return x.stats.sent + x.stats.delivered + x.stats.read === 2 && x.stats.pending === 3 ? x : undefined;
    }, 15_000, "two sent, three waiting");
    expect(running.status).toBe("running");
    // Three more new recipients at two a day: the last is through two days after the first two.
    expect(running.etaSeconds!).toBeGreaterThan(47 * 3600);
    expect(Date.parse(running.eta as string)).toBeGreaterThan(Date.now() + 47 * 3600_000);
  });
});
