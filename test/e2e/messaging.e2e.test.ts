import { describe, expect, it } from "vitest";
import { call, newKey } from "./client.ts";

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
  it("session -> send -> delivered -> read; a second session receives; history and contacts", async () => {
    const key = await newKey("pro");
    const a = (await (await call("/api/sessions", { method: "POST", key, json: { name: "a" } })).json()) as { id: string; status: string; me: { chatId: string } };
    const b = (await (await call("/api/sessions", { method: "POST", key, json: { name: "b" } })).json()) as { id: string; me: { chatId: string } };
    expect(a.status).toBe("WORKING");
    const sent = await call("/api/messages/send", { method: "POST", key, json: { sessionId: a.id, to: b.me.chatId, text: "hello b" } });
    expect(sent.status).toBe(201);
    const msg = (await sent.json()) as { id: string; status: string };
    expect(msg.status).toBe("sent");
    const read = await waitFor(async () => {
      const page = (await (await call(`/api/messages/${b.me.chatId}?sessionId=${a.id}`, { key })).json()) as { data: { id: string; status: string; readAt: string | null }[] };
      const m = page.data.find((x) => x.id === msg.id);
      return m?.status === "read" ? m : undefined;
    }, 15_000, "read receipt");
    expect(read.readAt).not.toBeNull();
    const inbox = (await (await call(`/api/messages/${a.me.chatId.replace("@c.us", "@s.whatsapp.net")}?sessionId=${b.id}`, { key })).json()) as { data: { direction: string; text: string }[] };
    expect(inbox.data).toEqual([expect.objectContaining({ direction: "inbound", text: "hello b" })]);
    const contacts = (await (await call(`/api/contacts?q=${a.me.chatId.split("@")[0]}`, { key })).json()) as { data: unknown[] };
    expect(contacts.data).toHaveLength(1);
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
