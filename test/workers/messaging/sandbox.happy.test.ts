import { describe, expect, it } from "vitest";
import { api, createKey } from "../helpers.ts";
import { eventsOf, getMessage, json, sandboxSession, sendText, waitFor, type MessageJson, type SessionJson } from "./support.ts";

describe("messaging: sandbox sessions and sends", () => {
  it("creates a sandbox session that is WORKING at once with its own number, and emits session.connected", async () => {
    const k = await createKey("pro");
    const s = await sandboxSession(k.key);
    expect(s.status).toBe("WORKING");
    expect(s.network).toBe("sandbox");
    expect(s.phoneNumber).toMatch(/^\+\d{8,15}$/);
    expect(s.me?.chatId).toBe(`${s.phoneNumber!.slice(1)}@c.us`);
    const got = await json<SessionJson>(await api(`/api/sessions/${s.id}`, { key: k.key }));
    expect(got).toEqual(s);
    const ev = await waitFor(() => eventsOf(k.accountId, "session.connected")[0], 10_000, "session.connected");
    expect(ev.data).toMatchObject({ id: s.id, status: "WORKING" });
    expect(ev.sessionId).toBe(s.id);
  });

  it("send -> sent -> delivered -> read with timestamps, each announced on the events queue", async () => {
    const k = await createKey("pro");
    const s = await sandboxSession(k.key);
    const m = await sendText(k.key, s.id, "+14155550123", "hello");
    expect(m).toMatchObject({ sessionId: s.id, chatId: "14155550123@c.us", direction: "outbound", type: "text", text: "hello", status: "sent" });
    expect(m.sentAt).not.toBeNull();
    const read = await waitFor(async () => {
      const cur = await getMessage(k.key, "14155550123@s.whatsapp.net", m.id);
      return cur?.status === "read" ? cur : undefined;
    }, 10_000, "read");
    expect(Date.parse(read.deliveredAt!)).toBeGreaterThanOrEqual(Date.parse(read.sentAt!));
    expect(Date.parse(read.readAt!)).toBeGreaterThanOrEqual(Date.parse(read.deliveredAt!));
    const types = await waitFor(() => {
      const t = eventsOf(k.accountId).filter((e) => (e.data as { id?: string }).id === m.id).map((e) => e.type);
      return t.length >= 3 ? t : undefined;
    }, 10_000, "message events");
    expect(types).toEqual(["message.sent", "message.delivered", "message.read"]);
    const readEvent = eventsOf(k.accountId, "message.read").find((e) => (e.data as { id: string }).id === m.id)!;
    expect(readEvent.data).toEqual(read);
  });

  it("a 999 number fails with no_account", async () => {
    const k = await createKey("pro");
    const s = await sandboxSession(k.key);
    const m = await sendText(k.key, s.id, "9991234567@c.us", "x");
    expect(m.status).toBe("failed");
    expect(m.error?.code).toBe("no_account");
    await new Promise((r) => setTimeout(r, 400));
    expect((await getMessage(k.key, "9991234567@c.us", m.id))?.status).toBe("failed");
  });

  it("a message to another sandbox session of the account arrives there as message.received, from a new contact", async () => {
    const k = await createKey("pro");
    const a = await sandboxSession(k.key);
    const b = await sandboxSession(k.key);
    await sendText(k.key, a.id, b.me!.chatId, "ping");
    const inbox = await json<{ data: MessageJson[] }>(await api(`/api/messages/${a.me!.chatId}?sessionId=${b.id}`, { key: k.key }));
    expect(inbox.data).toHaveLength(1);
    expect(inbox.data[0]).toMatchObject({ direction: "inbound", status: "received", text: "ping", sessionId: b.id, chatId: a.me!.chatId });
    const received = await waitFor(() => eventsOf(k.accountId, "message.received")[0], 10_000, "message.received");
    expect(received.sessionId).toBe(b.id);
    const contact = await waitFor(() => eventsOf(k.accountId, "contact.created")[0], 10_000, "contact.created");
    expect(contact.data).toMatchObject({ phone: a.phoneNumber, chatId: a.me!.chatId });
  });

  it("simulated inbound: stored, announced, STOP opts the contact out", async () => {
    const k = await createKey("pro");
    const s = await sandboxSession(k.key);
    const r1 = await api(`/api/sessions/${s.id}/sandbox/inbound`, { method: "POST", key: k.key, json: { from: "15550001111@c.us", text: "hi there" } });
    expect(r1.status).toBe(201);
    expect(await json(r1)).toMatchObject({ direction: "inbound", text: "hi there", chatId: "15550001111@c.us" });
    const contacts = await json<{ data: { phone: string; optedOut: boolean }[] }>(await api("/api/contacts?q=15550001111", { key: k.key }));
    expect(contacts.data).toEqual([expect.objectContaining({ phone: "+15550001111", optedOut: false })]);
    await api(`/api/sessions/${s.id}/sandbox/inbound`, { method: "POST", key: k.key, json: { from: "+15550001111", text: "  stop " } });
    const after = await json<{ data: { optedOut: boolean }[] }>(await api("/api/contacts?q=15550001111", { key: k.key }));
    expect(after.data[0]!.optedOut).toBe(true);
    await waitFor(() => eventsOf(k.accountId, "message.received").length >= 2, 10_000, "two received events");
    expect(eventsOf(k.accountId, "contact.created")).toHaveLength(1);
  });

  it("history pages newest first across pages, by either chat id form", async () => {
    const k = await createKey("pro");
    const s = await sandboxSession(k.key);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const m = await json<MessageJson>(await api("/api/messages/send", { method: "POST", key: k.key, json: { sessionId: s.id, to: "14155550999", text: `m${i}` } }));
      ids.push(m.id);
    }
    await api(`/api/sessions/${s.id}/sandbox/inbound`, { method: "POST", key: k.key, json: { from: "14155550999", text: "reply" } });
    const p1 = await json<{ data: MessageJson[]; nextCursor: string }>(await api(`/api/messages/14155550999@c.us?sessionId=${s.id}&limit=4`, { key: k.key }));
    expect(p1.data.map((m) => m.text)).toEqual(["reply", "m4", "m3", "m2"]);
    const p2 = await json<{ data: MessageJson[]; nextCursor: string | null }>(await api(`/api/messages/14155550999@s.whatsapp.net?sessionId=${s.id}&limit=4&cursor=${p1.nextCursor}`, { key: k.key }));
    expect(p2.data.map((m) => m.text)).toEqual(["m1", "m0"]);
    expect(p2.nextCursor).toBeNull();
  });

  it("restart and delete emit session.disconnected / connected; a deleted session refuses sends with 409", async () => {
    const k = await createKey("pro");
    const s = await sandboxSession(k.key);
    const r = await api(`/api/sessions/${s.id}/restart`, { method: "POST", key: k.key });
    expect(r.status).toBe(200);
    expect((await json<SessionJson>(r)).status).toBe("WORKING");
    const d = await api(`/api/sessions/${s.id}`, { method: "DELETE", key: k.key });
    expect(d.status).toBe(200);
    expect(await json(d)).toMatchObject({ status: "STOPPED", statusReason: "deleted" });
    await waitFor(() => eventsOf(k.accountId, "session.disconnected").length >= 2, 10_000, "two disconnects");
    expect(eventsOf(k.accountId, "session.connected").length).toBe(2);
    const send = await api("/api/messages/send", { method: "POST", key: k.key, json: { sessionId: s.id, to: "14155550123", text: "x" } });
    expect(send.status).toBe(409);
    const again = await api(`/api/sessions/${s.id}/restart`, { method: "POST", key: k.key });
    expect(again.status).toBe(409);
  });
});
