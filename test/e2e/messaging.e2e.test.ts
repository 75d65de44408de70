import { describe, expect, it } from "vitest";
import { call, newKey, typedClient } from "./client.ts";

async function waitFor<T>(fn: () => Promise<T | undefined>, timeoutMs: number, what: string): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe("messaging end to end (npm run dev, sandbox network)", () => {
  it("session -> send -> delivered; a second session receives and reads the chat -> read; history and contacts (typed client)", async () => {
    const api = typedClient(await newKey("pro"));
    const { data: a } = await api.POST("/api/sessions", { body: { name: "a" } });
    const { data: b } = await api.POST("/api/sessions", { body: { name: "b" } });
    if (!a || !b) throw new Error("session not created");
    expect(a.status).toBe("WORKING");
    const sent = await api.POST("/api/messages/send", { body: { sessionId: a.id, to: b.me!.chatId, text: "hello b" } });
    expect(sent.response.status).toBe(201);
    const msg = sent.data!;
    expect(msg.status).toBe("sent");
    // A message to another session of the account is read when that session reads the chat.
    await waitFor(async () => {
      const { data: page } = await api.GET("/api/messages/{chatId}", { params: { path: { chatId: a.me!.chatId }, query: { sessionId: b.id } } });
      return page?.data.length ? page : undefined;
    }, 15_000, "arrival at b");
    const marked = await api.POST("/api/chats/{chatId}/read", { params: { path: { chatId: a.me!.chatId } }, body: { sessionId: b.id } });
    expect(marked.data?.unreadCount).toBe(0);
    const read = await waitFor(async () => {
      const { data: page } = await api.GET("/api/messages/{chatId}", { params: { path: { chatId: b.me!.chatId }, query: { sessionId: a.id } } });
      const m = page?.data.find((x) => x.id === msg.id);
      return m?.status === "read" ? m : undefined;
    }, 15_000, "read receipt");
    expect(read.readAt).not.toBeNull();
    const { data: inbox } = await api.GET("/api/messages/{chatId}", { params: { path: { chatId: a.me!.chatId.replace("@c.us", "@s.whatsapp.net") }, query: { sessionId: b.id } } });
    expect(inbox?.data).toEqual([expect.objectContaining({ direction: "inbound", text: "hello b" })]);
    const { data: contacts } = await api.GET("/api/contacts", { params: { query: { q: a.me!.chatId.split("@")[0] } } });
    expect(contacts?.data).toHaveLength(1);
  });

  it("bulk: 200 messages all reach read; batch progress reports it", async () => {
    const key = await newKey("pro");
    const s = (await (await call("/api/sessions", { method: "POST", key, json: {} })).json()) as { id: string };
    const messages = Array.from({ length: 200 }, (_, i) => ({ to: `+1415${String(6_000_000 + i)}`, text: `bulk ${i}` }));
    const res = await call("/api/messages/send-bulk", { method: "POST", key, json: { sessionId: s.id, messages } });
    expect(res.status).toBe(202);
    const { batchId, accepted } = (await res.json()) as { batchId: string; accepted: number };
    expect(accepted).toBe(200);
    const batch = await waitFor(async () => {
      const b = (await (await call(`/api/messages/batches/${batchId}`, { key })).json()) as { read: number; total: number };
      return b.read === b.total ? b : undefined;
    }, 30_000, "batch read");
    expect(batch.total).toBe(200);
  });

  it("documents the messaging routes in /openapi.json", async () => {
    const doc = (await (await call("/openapi.json")).json()) as { paths: Record<string, unknown> };
    for (const p of ["/api/sessions", "/api/messages/send", "/api/messages/send-media", "/api/messages/send-bulk", "/api/messages/{chatId}", "/api/contacts/{id}", "/hooks/whatsapp/{sessionId}"]) {
      expect(Object.keys(doc.paths)).toContain(p);
    }
  });
});
