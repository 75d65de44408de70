// Meta's limits on the Cloud API fake: the session holds sends back before Meta would refuse them, and backs off
// as Meta asks when Meta refuses anyway (131056 pair rate, 131049 ecosystem engagement).
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { sessionStub } from "../../../src/messaging/sessions/session-do.ts";
import { api, createKey } from "../helpers.ts";
import { APP_SECRET, openWindows, VERIFY } from "./whatsapp-support.ts";
import { fakeFail, fakePhone, fakeRequests, json, waitFor, type MessageJson, type SessionJson } from "./support.ts";

const TEMPLATE = { name: "order_update", language: "en_US" };
type Batch = { total: number; pending: number; failed: number; sent: number };

async function session(key: string, limits?: Record<string, unknown>) {
  const phone = await fakePhone("token-abc");
  const res = await api("/api/sessions", {
    method: "POST",
    key,
    json: { network: "whatsapp", sendRatePerMinute: null, ...(limits ? { limits } : {}), whatsapp: { phoneNumberId: phone.phoneNumberId, accessToken: phone.token, appSecret: APP_SECRET, verifyToken: VERIFY } },
  });
  expect(res.status).toBe(201);
  return { phone, session: await json<SessionJson>(res) };
}

async function bulk(key: string, sessionId: string, messages: Record<string, unknown>[]): Promise<() => Promise<Batch>> {
  const res = await api("/api/messages/send-bulk", { method: "POST", key, json: { sessionId, messages } });
  expect(res.status).toBe(202);
  const { batchId } = await json<{ batchId: string }>(res);
  return async () => json<Batch>(await api(`/api/messages/batches/${batchId}`, { key }));
}

const sends = async (phoneNumberId: string) => (await fakeRequests(phoneNumberId)).filter((r) => r.method === "POST" && r.body?.type !== undefined);
const outbox = (sessionId: string) => runInDurableObject(sessionStub(env, sessionId), (_o, state) => state.storage.sql.exec<{ message_id: string; due: number; attempts: number }>("SELECT message_id, due, attempts FROM outbox ORDER BY due").toArray());
/** Time passes for the session: its queued sends and its pair buckets are due now. */
const elapse = (sessionId: string) => runInDurableObject(sessionStub(env, sessionId), (_o, state) => {
  state.storage.sql.exec("UPDATE outbox SET due = ?", Date.now() - 1);
  state.storage.sql.exec("DELETE FROM limit_pair");
});

describe("whatsapp: Meta's limits, before Meta's", () => {
  it("throughput: at most N sends a second reach Meta", async () => {
    const k = await createKey("pro");
    const { phone, session: s } = await session(k.key, { throughputPerSecond: 2 });
    const numbers = Array.from({ length: 5 }, (_, i) => `1650555${String(4100 + i)}`);
    const batch = await bulk(k.key, s.id, numbers.map((to) => ({ to, template: TEMPLATE })));
    await waitFor(async () => (await batch()).pending === 0, 15_000, "all sent");
    expect(await sends(phone.phoneNumberId)).toHaveLength(5);
    const times: number[] = [];
    for (const n of numbers) {
      const page = await json<{ data: MessageJson[] }>(await api(`/api/messages/${n}@c.us?sessionId=${s.id}`, { key: k.key }));
      times.push(...page.data.map((m) => Date.parse(m.sentAt!)));
    }
    // Sends are admitted by the second they start in; sentAt is when Meta answered, so one admitted at
    // the end of a second may be stamped in the next: at most one more than the rate per second of
    // sentAt, and five at 2 a second start in at least three seconds: from the first answer to the last
    // more than a second less the first answer's round trip (without the limit: all within a few ms).
    const perSecond = new Map<number, number>();
    for (const t of times) perSecond.set(Math.floor(t / 1000), (perSecond.get(Math.floor(t / 1000)) ?? 0) + 1);
    expect(Math.max(...perSecond.values())).toBeLessThanOrEqual(3);
    expect(Math.max(...times) - Math.min(...times)).toBeGreaterThan(500);
  });

  it("pair rate: a single send over it answers 429 before Meta is called", async () => {
    const k = await createKey("pro");
    const { phone, session: s } = await session(k.key, { pairBurst: 1 });
    await openWindows(s.id, phone.phoneNumberId, ["16505551234"]);
    const send = () => api("/api/messages/send", { method: "POST", key: k.key, json: { sessionId: s.id, to: "16505551234", text: "x" } });
    expect((await send()).status).toBe(201);
    const over = await send();
    expect(over.status).toBe(429);
    // Meta's 6 s per recipient.
    expect(Number(over.headers.get("Retry-After"))).toBe(6);
    expect(await sends(phone.phoneNumberId)).toHaveLength(1);
  });

  it("131056 on a single send: it fails with pair_rate_limited, and the next to that recipient answers 429 before Meta", async () => {
    const k = await createKey("pro");
    const { phone, session: s } = await session(k.key);
    await openWindows(s.id, phone.phoneNumberId, ["16505551234"]);
    await fakeFail(phone.phoneNumberId, 131056);
    const send = () => api("/api/messages/send", { method: "POST", key: k.key, json: { sessionId: s.id, to: "16505551234", text: "x" } });
    expect(await json<MessageJson>(await send())).toMatchObject({ status: "failed", error: { code: "pair_rate_limited" } });
    expect((await send()).status).toBe(429);
    expect(await sends(phone.phoneNumberId)).toHaveLength(1);
  });

  it("messaging limit (250 by default): the 251st new recipient of a template waits 24 h and never reaches Meta meanwhile", { timeout: 120_000 }, async () => {
    const k = await createKey("pro");
    const { phone, session: s } = await session(k.key);
    expect(s.limits).toEqual({ throughputPerSecond: 80, pairIntervalMs: 6000, pairBurst: 45, messagingLimit: 250 });
    const batch = await bulk(k.key, s.id, Array.from({ length: 251 }, (_, i) => ({ to: `1650666${String(i).padStart(4, "0")}`, template: TEMPLATE })));
    await waitFor(async () => (await batch()).pending === 1, 90_000, "250 sent");
    expect(await batch()).toMatchObject({ total: 251, pending: 1, failed: 0 });
    expect(await sends(phone.phoneNumberId)).toHaveLength(250);
    const [waiting] = await outbox(s.id);
    expect(waiting!.due).toBeGreaterThan(Date.now() + 23 * 3600_000);
    expect(waiting!.attempts).toBe(0);
  });

  it("131056 (pair rate): the send and the next to that recipient wait, and are sent after", async () => {
    const k = await createKey("pro");
    const { phone, session: s } = await session(k.key);
    await openWindows(s.id, phone.phoneNumberId, ["16505551234"]);
    await fakeFail(phone.phoneNumberId, 131056);
    const batch = await bulk(k.key, s.id, [{ to: "16505551234", text: "a" }, { to: "16505551234", text: "b" }]);
    const queued = await waitFor(async () => ((await outbox(s.id)).some((r) => r.attempts === 1) ? outbox(s.id) : undefined), 10_000, "the retry scheduled");
    expect(queued).toHaveLength(2);
    // Meta's pair interval, doubling with each refusal; the other send waits for the recipient's bucket.
    for (const r of queued) expect(r.due).toBeGreaterThan(Date.now() + 3_000);
    expect(await sends(phone.phoneNumberId)).toHaveLength(1);
    await elapse(s.id);
    expect(await runDurableObjectAlarm(sessionStub(env, s.id))).toBe(true);
    await waitFor(async () => (await batch()).pending === 0, 10_000, "both sent");
    expect(await batch()).toMatchObject({ failed: 0 });
    expect(await sends(phone.phoneNumberId)).toHaveLength(3);
  });

  it("131049 (ecosystem engagement): retried once after 24 h, then failed with ecosystem_limited", async () => {
    const k = await createKey("pro");
    const { phone, session: s } = await session(k.key);
    await fakeFail(phone.phoneNumberId, 131049, 2);
    const batch = await bulk(k.key, s.id, [{ to: "16505559876", template: TEMPLATE }]);
    const [queued] = await waitFor(async () => ((await outbox(s.id)).some((r) => r.attempts === 1) ? outbox(s.id) : undefined), 10_000, "the retry scheduled");
    expect(queued!.due).toBeGreaterThan(Date.now() + 23 * 3600_000);
    expect(await batch()).toMatchObject({ pending: 1 });
    await elapse(s.id);
    expect(await runDurableObjectAlarm(sessionStub(env, s.id))).toBe(true);
    await waitFor(async () => (await batch()).failed === 1, 10_000, "failed after the retry");
    const page = await json<{ data: MessageJson[] }>(await api(`/api/messages/16505559876@c.us?sessionId=${s.id}`, { key: k.key }));
    expect(page.data[0]).toMatchObject({ status: "failed", error: { code: "ecosystem_limited" } });
    expect(await sends(phone.phoneNumberId)).toHaveLength(2);
  });
});
