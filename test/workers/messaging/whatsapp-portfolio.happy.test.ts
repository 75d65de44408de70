// The messaging limit per business portfolio on the Cloud API fake: numbers of one account that share a
// businessAccountId (WABA) share one rolling-24h window of unique recipients (Meta's tier is the portfolio's);
// a send over it never reaches Meta; a tier raised with PATCH lets it through; a campaign's eta counts the window.
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { portfolioName } from "../../../src/messaging/sessions/portfolio.ts";
import { sessionStub } from "../../../src/messaging/sessions/session-do.ts";
import { api, createKey } from "../helpers.ts";
import { action, createCampaign, getCampaign, importContacts, uniquePhone } from "../campaigns/support.ts";
import { APP_SECRET, fakeWaba, VERIFY } from "./whatsapp-support.ts";
import { fakePhone, fakeRequests, json, waitFor, type MessageJson, type SessionJson } from "./support.ts";

const TEMPLATE = { name: "hello_world", language: "en_US" };

async function number(key: string, businessAccountId?: string) {
  const phone = await fakePhone("token-abc");
  const res = await api("/api/sessions", {
    method: "POST",
    key,
    json: { network: "whatsapp", sendRatePerMinute: null, whatsapp: { phoneNumberId: phone.phoneNumberId, ...(businessAccountId ? { businessAccountId } : {}), accessToken: phone.token, appSecret: APP_SECRET, verifyToken: VERIFY } },
  });
  expect(res.status).toBe(201);
  return { phone, session: await json<SessionJson>(res) };
}

/** `n` recipients already reached by the portfolio in the last hour (what its other numbers sent before). */
async function reachedBefore(accountId: string, waba: string, n: number): Promise<void> {
  await runInDurableObject(env.PORTFOLIOS.getByName(portfolioName(accountId, waba)), (_o, state) => {
    state.storage.sql.exec("CREATE TABLE IF NOT EXISTS portfolio_reach (recipient TEXT PRIMARY KEY, at INTEGER NOT NULL)");
    for (let i = 0; i < n; i++) state.storage.sql.exec("INSERT INTO portfolio_reach (recipient, at) VALUES (?, ?)", `1999${String(i).padStart(7, "0")}`, Date.now() - 3_600_000);
  });
}

const template = async (key: string, sessionId: string, to: string) => json<MessageJson>(await api("/api/messages/send", { method: "POST", key, json: { sessionId, to, template: TEMPLATE } }));
const sends = async (phoneNumberId: string) => (await fakeRequests(phoneNumberId)).filter((r) => r.method === "POST" && r.body?.type !== undefined);
const outboxDue = (sessionId: string) => runInDurableObject(sessionStub(env, sessionId), (_o, state) => state.storage.sql.exec<{ due: number }>("SELECT due FROM outbox").toArray());

describe("whatsapp: the messaging limit is the portfolio's", () => {
  it("two numbers of one WABA share the 250 unique recipients; a number of no WABA keeps its own; the send over it never reaches Meta", async () => {
    const k = await createKey("pro");
    const phone = await fakePhone("token-abc");
    const waba = await fakeWaba(phone.token);
    const a = await number(k.key, waba);
    const b = await number(k.key, waba);
    const solo = await number(k.key);
    await reachedBefore(k.accountId, waba, 248);
    expect((await template(k.key, a.session.id, "16507770001")).status).toBe("sent");
    // Reached by a: no new place taken.
    expect((await template(k.key, b.session.id, "16507770001")).status).toBe("sent");
    expect((await template(k.key, b.session.id, "16507770002")).status).toBe("sent");
    const over = await template(k.key, a.session.id, "16507770003");
    expect(over.status).toBe("pending");
    expect((await outboxDue(a.session.id))[0]!.due).toBeGreaterThan(Date.now() + 22 * 3600_000);
    expect(await sends(a.phone.phoneNumberId)).toHaveLength(1);
    expect(await sends(b.phone.phoneNumberId)).toHaveLength(2);
    expect((await template(k.key, solo.session.id, "16507770003")).status).toBe("sent");

    // Meta raises the tier (one step): PATCH says so, and the waiting send goes out.
    const raised = await api(`/api/sessions/${a.session.id}`, { method: "PATCH", key: k.key, json: { limits: { messagingLimit: 2000 } } });
    expect(raised.status).toBe(200);
    expect((await json<SessionJson>(raised)).limits).toMatchObject({ messagingLimit: 2000, throughputPerSecond: 80 });
    await waitFor(async () => (await sends(a.phone.phoneNumberId)).length === 2, 10_000, "the waiting send reached Meta");
    // The tier is the portfolio's: the other number of the WABA has it too; the number of no WABA does not.
    const limitOf = async (id: string) => (await json<SessionJson & { limits: { messagingLimit: unknown } }>(await api(`/api/sessions/${id}`, { key: k.key }))).limits.messagingLimit;
    expect(await limitOf(b.session.id)).toBe(2000);
    expect(await limitOf(solo.session.id)).toBe(250);
    const page = await json<{ data: MessageJson[] }>(await api(`/api/messages/16507770003@c.us?sessionId=${a.session.id}`, { key: k.key }));
    expect(page.data[0]!.status).not.toBe("pending");
  });

  it("a campaign on a number whose portfolio's window is full: nothing reaches Meta and its eta is a day out", async () => {
    const k = await createKey("pro");
    const phone = await fakePhone("token-abc");
    const waba = await fakeWaba(phone.token);
    const b = await number(k.key, waba);
    await reachedBefore(k.accountId, waba, 250);
    await importContacts(k.key, Array.from({ length: 2 }, (_, i) => ({ phone: uniquePhone(), name: `W${i}`, tags: ["wa-portfolio"] })));
    const c = await createCampaign(k.key, { sessionId: b.session.id, message: { template: TEMPLATE }, audience: { tags: ["wa-portfolio"] } });
    expect((await action(k.key, c.id, "start")).status).toBe(200);
    const running = await waitFor(async () => {
      const x = await getCampaign(k.key, c.id);
      return x.stats.pending === 2 && typeof x.etaSeconds === "number" ? x : undefined;
    }, 15_000, "both waiting, with an eta");
    expect(running.etaSeconds!).toBeGreaterThan(22 * 3600);
    expect(await sends(b.phone.phoneNumberId)).toHaveLength(0);
  });

  it("PATCH: a lower throughput slows sends already queued for Meta", { timeout: 60_000 }, async () => {
    const k = await createKey("pro");
    const phone = await fakePhone("token-abc");
    const res = await api("/api/sessions", { method: "POST", key: k.key, json: { network: "whatsapp", sendRatePerMinute: null, limits: { throughputPerSecond: 3 }, whatsapp: { phoneNumberId: phone.phoneNumberId, accessToken: phone.token, appSecret: APP_SECRET, verifyToken: VERIFY } } });
    const s = await json<SessionJson>(res);
    // 12: a loaded machine may send several at the old rate before the change lands, and more than two must
    // be left to be sent under the new one (8 left 2 in one fresh-clone run).
    const numbers = Array.from({ length: 12 }, (_, i) => `1650888${String(1000 + i)}`);
    const bulk = await json<{ batchId: string }>(await api("/api/messages/send-bulk", { method: "POST", key: k.key, json: { sessionId: s.id, messages: numbers.map((to) => ({ to, template: { name: "order_update", language: "en_US" } })) } }));
    const pending = async () => (await json<{ pending: number }>(await api(`/api/messages/batches/${bulk.batchId}`, { key: k.key }))).pending;
    await waitFor(async () => (await pending()) < numbers.length, 15_000, "the first sent");
    const patched = await api(`/api/sessions/${s.id}`, { method: "PATCH", key: k.key, json: { limits: { throughputPerSecond: 1 } } });
    expect((await json<SessionJson>(patched)).limits).toMatchObject({ throughputPerSecond: 1, messagingLimit: 250, pairBurst: 45 });
    const changedAt = Date.now();
    await waitFor(async () => (await pending()) === 0, 30_000, "all sent");
    const after: number[] = [];
    for (const n of numbers) {
      const page = await json<{ data: MessageJson[] }>(await api(`/api/messages/${n}@c.us?sessionId=${s.id}`, { key: k.key }));
      // sentAt is when Meta answered: well after the change, every send was admitted under the new limit.
      after.push(...page.data.map((m) => Date.parse(m.sentAt!)).filter((t) => t > changedAt + 1500));
    }
    expect(after.length).toBeGreaterThan(2);
    after.sort((x, y) => x - y);
    // One a second: n sends admitted in n different seconds span more than n - 2 seconds (at 3 a second, about n / 3).
    expect(after.at(-1)! - after[0]!).toBeGreaterThan((after.length - 2) * 1000);
    expect(await sends(phone.phoneNumberId)).toHaveLength(numbers.length);
  });
});
