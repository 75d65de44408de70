import { describe, expect, it } from "vitest";
import { api, createKey } from "../helpers.ts";
import { allEvents } from "../events/log.support.ts";
import { json, sandboxSession, waitFor, type MessageJson } from "./support.ts";
import type { components } from "../../../client/index.ts";

type Batch = components["schemas"]["Batch"];

describe("messaging: bulk sends", () => {
  it("accepts 1,000 items; every one reaches a terminal state; invalid items are rejected by index", async () => {
    const k = await createKey("pro");
    const s = await sandboxSession(k.key);
    const items: unknown[] = Array.from({ length: 1000 }, (_, i) => ({ to: `+1415${String(5_000_000 + i).padStart(7, "0")}`, text: `hello ${i}` }));
    items[3] = { to: "not-a-number", text: "x" };
    items[10] = { to: "+14155550000" };
    items[20] = { to: "+14155550000", text: "x", extra: true };
    items[30] = { to: "9990001111", text: "no account" };
    const res = await api("/api/messages/send-bulk", { method: "POST", key: k.key, json: { sessionId: s.id, messages: items } });
    expect(res.status).toBe(202);
    const body = await json<{ batchId: string; accepted: number; rejected: { index: number; error: { code: string; message: string } }[] }>(res);
    expect(body.accepted).toBe(997);
    expect(body.rejected.map((r) => r.index)).toEqual([3, 10, 20]);
    expect(body.rejected[0]!.error.message).toMatch(/E\.164/);
    const done = await waitFor(async () => {
      const b = await json<Batch>(await api(`/api/messages/batches/${body.batchId}`, { key: k.key }));
      return b.pending === 0 && b.read + b.failed === b.total ? b : undefined;
    }, 25_000, "batch terminal");
    expect(done).toMatchObject({ total: 997, pending: 0, failed: 1, read: 996, done: true });
    const failed = await json<{ data: MessageJson[] }>(await api(`/api/messages/9990001111@c.us?sessionId=${s.id}`, { key: k.key }));
    expect(failed.data[0]).toMatchObject({ status: "failed", error: { code: "no_account" }, batchId: body.batchId });
  });

  it("paces sends at the session's rate", async () => {
    const k = await createKey("pro");
    const s = await sandboxSession(k.key, { sendRatePerMinute: 600 });
    const res = await api("/api/messages/send-bulk", { method: "POST", key: k.key, json: { sessionId: s.id, messages: Array.from({ length: 6 }, (_, i) => ({ to: "+14155557777", text: `p${i}` })) } });
    const { batchId } = await json<{ batchId: string }>(res);
    await waitFor(async () => (await json<Batch>(await api(`/api/messages/batches/${batchId}`, { key: k.key }))).pending === 0, 15_000, "paced batch");
    const history = await json<{ data: MessageJson[] }>(await api(`/api/messages/14155557777@c.us?sessionId=${s.id}`, { key: k.key }));
    const sentTimes = history.data.map((m) => Date.parse(m.sentAt!)).sort((a, b) => a - b);
    // 600/min = one per 100 ms (±25 % jitter): 6 messages span at least ~375 ms.
    expect(sentTimes[5]! - sentTimes[0]!).toBeGreaterThanOrEqual(350);
  });

  it("right after its 202 a bulk's messages are all there: the batch counts each one and the chat's history shows it with its status", async () => {
    const k = await createKey("pro");
    // One a second: most are still queued when they are read.
    const s = await sandboxSession(k.key, { sendRatePerMinute: 60 });
    const res = await api("/api/messages/send-bulk", { method: "POST", key: k.key, json: { sessionId: s.id, messages: Array.from({ length: 5 }, (_, i) => ({ to: `+1415555${7800 + i}`, text: `r${i}` })) } });
    expect(res.status).toBe(202);
    const { batchId } = await json<{ batchId: string }>(res);
    const batch = await json<Batch>(await api(`/api/messages/batches/${batchId}`, { key: k.key }));
    expect(batch.total).toBe(5);
    expect(batch.pending + batch.sent + batch.delivered + batch.read).toBe(5);
    expect(batch.pending).toBeGreaterThan(0);
    const history = await json<{ data: MessageJson[] }>(await api(`/api/messages/14155557804@c.us?sessionId=${s.id}`, { key: k.key }));
    expect(history.data).toHaveLength(1);
    expect(history.data[0]).toMatchObject({ text: "r4", batchId, status: "pending" });
  });

  it("a bulk's messages to one chat are sent in the order given (their message.sent events numbered in it)", async () => {
    const k = await createKey("pro");
    const s = await sandboxSession(k.key);
    const N = 20;
    const res = await api("/api/messages/send-bulk", { method: "POST", key: k.key, json: { sessionId: s.id, messages: Array.from({ length: N }, (_, i) => ({ to: "+14155557900", text: `o${i}` })) } });
    expect(res.status).toBe(202);
    const { batchId } = await json<{ batchId: string }>(res);
    await waitFor(async () => (await json<Batch>(await api(`/api/messages/batches/${batchId}`, { key: k.key }))).pending === 0, 15_000, "all sent");
    const sent = await waitFor(async () => {
      const got = (await allEvents(k, `sessionId=${s.id}&limit=50`)).filter((e) => e.type === "message.sent");
      return got.length === N ? got : undefined;
    }, 15_000, `${N} message.sent events`);
    const inOrder = sent.map((e) => e.payload as unknown as { sequence: number; data: { text: string } }).sort((a, b) => a.sequence - b.sequence);
    expect(inOrder.map((p) => p.data.text)).toEqual(Array.from({ length: N }, (_, i) => `o${i}`));
  });

  it("a bulk's messages still queued when its session is deleted end failed (session_stopped), none left pending", async () => {
    const k = await createKey("pro");
    const s = await sandboxSession(k.key, { sendRatePerMinute: 60 });
    const res = await api("/api/messages/send-bulk", { method: "POST", key: k.key, json: { sessionId: s.id, messages: Array.from({ length: 4 }, (_, i) => ({ to: `+1415555${7900 + i}`, text: `d${i}` })) } });
    const { batchId } = await json<{ batchId: string }>(res);
    expect((await api(`/api/sessions/${s.id}`, { method: "DELETE", key: k.key })).status).toBeLessThan(300);
    const done = await json<Batch>(await api(`/api/messages/batches/${batchId}`, { key: k.key }));
    expect(done).toMatchObject({ total: 4, pending: 0 });
    expect(done.failed).toBeGreaterThan(0);
    const history = await json<{ data: MessageJson[] }>(await api(`/api/messages/14155557903@c.us?sessionId=${s.id}`, { key: k.key }));
    expect(history.data[0]).toMatchObject({ status: "failed", error: { code: "session_stopped" } });
  });
});
