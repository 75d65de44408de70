import { describe, expect, it } from "vitest";
import { api, createKey } from "../helpers.ts";
import { eventsOf, fakeFail, fakeRequests, json, sandboxSession, sendText, waitFor, type MessageJson } from "./support.ts";
import { postHook, webhookOf, whatsappSession } from "./whatsapp-support.ts";

interface ChatJson {
  id: string;
  sessionId: string;
  contact: { name: string | null; phone: string } | null;
  lastMessage: MessageJson | null;
  lastActivityAt: string;
  unreadCount: number;
  window: { open: boolean; until: string | null };
}

const inbound = (key: string, sessionId: string, from: string, text: string) => api(`/api/sessions/${sessionId}/sandbox/inbound`, { method: "POST", key, json: { from, text } });
const listChats = async (key: string, query: string) => {
  const res = await api(`/api/chats?${query}`, { key });
  expect(res.status).toBe(200);
  return json<{ data: ChatJson[]; nextCursor: string | null }>(res);
};

describe("messaging: chats", () => {
  it("lists a session's chats newest activity first, with contact, last message, unread count and window; pages by cursor", async () => {
    const k = await createKey("pro");
    const s = await sandboxSession(k.key);
    await inbound(k.key, s.id, "+15550001111", "first");
    await inbound(k.key, s.id, "+15550002222", "hello");
    await inbound(k.key, s.id, "+15550002222", "are you there?");
    await new Promise((r) => setTimeout(r, 5));
    const sent = await json<MessageJson>(await api("/api/messages/send", { method: "POST", key: k.key, json: { sessionId: s.id, to: "+15550003333", text: "our news" } }));
    const page = await listChats(k.key, `sessionId=${s.id}`);
    expect(page.data.map((c) => c.id)).toEqual(["15550003333@c.us", "15550002222@c.us", "15550001111@c.us"]);
    const [out, two, one] = page.data;
    expect(out).toMatchObject({ sessionId: s.id, contact: null, unreadCount: 0, window: { open: false, until: null }, lastMessage: { id: sent.id, direction: "outbound" } });
    expect(two).toMatchObject({ unreadCount: 2, contact: { phone: "+15550002222" }, window: { open: true }, lastMessage: { text: "are you there?", direction: "inbound" } });
    expect(Date.parse(two!.window.until!) - Date.parse(two!.lastMessage!.createdAt as string)).toBe(24 * 3600 * 1000);
    expect(one).toMatchObject({ unreadCount: 1, lastMessage: { text: "first" } });

    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const p = await listChats(k.key, `sessionId=${s.id}&limit=1${cursor ? `&cursor=${cursor}` : ""}`);
      expect(p.data.length).toBeLessThanOrEqual(1);
      seen.push(...p.data.map((c) => c.id));
      cursor = p.nextCursor;
    } while (cursor);
    expect(seen).toEqual(page.data.map((c) => c.id));

    // A reply moves the chat to the top; reading clears its unread count and stamps its messages.
    await inbound(k.key, s.id, "+15550001111", "me again");
    expect((await listChats(k.key, `sessionId=${s.id}`)).data[0]).toMatchObject({ id: "15550001111@c.us", unreadCount: 2 });
    const read = await api("/api/chats/+15550001111/read", { method: "POST", key: k.key, json: { sessionId: s.id } });
    expect(read.status).toBe(200);
    expect(await json(read)).toMatchObject({ id: "15550001111@c.us", unreadCount: 0 });
    const history = await json<{ data: MessageJson[] }>(await api(`/api/messages/15550001111@c.us?sessionId=${s.id}`, { key: k.key }));
    expect(history.data).toHaveLength(2);
    expect(history.data.every((m) => m.readAt !== null)).toBe(true);
    expect((await listChats(k.key, `sessionId=${s.id}`)).data.find((c) => c.id === "15550002222@c.us")!.unreadCount).toBe(2);
  });

  it("bad input: unknown session 404, unknown chat 404, bad chat id 400, bad cursor 400, sessionId required", async () => {
    const k = await createKey("pro");
    const s = await sandboxSession(k.key);
    expect((await api("/api/chats?sessionId=ses_nope", { key: k.key })).status).toBe(404);
    expect((await api("/api/chats", { key: k.key })).status).toBe(400);
    expect((await api(`/api/chats?sessionId=${s.id}&cursor=eyJ4Ijp7fX0`, { key: k.key })).status).toBe(400);
    expect((await api("/api/chats/15550009999@c.us/read", { method: "POST", key: k.key, json: { sessionId: s.id } })).status).toBe(404);
    const bad = await api("/api/chats/not-a-chat/read", { method: "POST", key: k.key, json: { sessionId: s.id } });
    expect(bad.status).toBe(400);
    expect(await json(bad)).toMatchObject({ error: { code: "invalid_request" } });
    const other = await createKey("pro");
    expect((await api(`/api/chats?sessionId=${s.id}`, { key: other.key })).status).toBe(404);
  });

  it("whatsapp: reading sends the Cloud API read receipt of the last inbound message (valid against the reference); a refusal changes nothing", async () => {
    const k = await createKey("pro");
    const { phone, session } = await whatsappSession(k.key);
    const now = Math.floor(Date.now() / 1000);
    await postHook(session.id, webhookOf(phone.phoneNumberId, [
      { from: "16505551234", id: "wamid.chat-1", timestamp: String(now - 60), type: "text", text: { body: "one" } },
      { from: "16505551234", id: "wamid.chat-2", timestamp: String(now - 30), type: "text", text: { body: "two" } },
    ]));
    await postHook(session.id, webhookOf(phone.phoneNumberId, [{ from: "16505550000", id: "wamid.old", timestamp: String(now - 25 * 3600), type: "text", text: { body: "long ago" } }]));
    const chats = (await listChats(k.key, `sessionId=${session.id}`)).data;
    expect(chats.map((c) => [c.id, c.unreadCount, c.window.open])).toEqual([
      ["16505551234@c.us", 2, true],
      ["16505550000@c.us", 1, false],
    ]);
    expect(chats[0]!.contact).toMatchObject({ name: "Sheena Nelson" });

    await fakeFail(phone.phoneNumberId, 131000);
    const refused = await api("/api/chats/16505551234@c.us/read", { method: "POST", key: k.key, json: { sessionId: session.id } });
    expect(refused.status).toBe(503);
    expect((await listChats(k.key, `sessionId=${session.id}`)).data[0]!.unreadCount).toBe(2);

    const ok = await api("/api/chats/16505551234@c.us/read", { method: "POST", key: k.key, json: { sessionId: session.id } });
    expect(ok.status).toBe(200);
    expect(await json(ok)).toMatchObject({ unreadCount: 0 });
    const reads = (await fakeRequests(phone.phoneNumberId)).filter((r) => r.method === "POST" && r.body?.status === "read");
    expect(reads.at(-1)).toMatchObject({ valid: true, body: { messaging_product: "whatsapp", status: "read", message_id: "wamid.chat-2" } });
    // Nothing unread: no second call to the network.
    await api("/api/chats/16505551234@c.us/read", { method: "POST", key: k.key, json: { sessionId: session.id } });
    expect((await fakeRequests(phone.phoneNumberId)).filter((r) => r.body?.status === "read")).toHaveLength(reads.length);
  });

  it("sandbox: messages to another session of the account are read when that session reads the chat, not before (message.read once each)", async () => {
    const k = await createKey("pro");
    const a = await sandboxSession(k.key);
    const b = await sandboxSession(k.key);
    const statusesAtA = async () => {
      const page = await json<{ data: MessageJson[] }>(await api(`/api/messages/${b.me!.chatId}?sessionId=${a.id}`, { key: k.key }));
      return page.data;
    };
    const sent = [];
    for (const text of ["one", "two", "three"]) sent.push(await sendText(k.key, a.id, b.me!.chatId, text));
    const ids = sent.map((m) => m.id);
    await waitFor(async () => (await statusesAtA()).filter((m) => m.status === "delivered").length === 3, 10_000, "delivered at the peer");
    // Well past SANDBOX_READ_MS (200 ms here): nobody has read them yet.
    await new Promise((r) => setTimeout(r, 800));
    expect((await statusesAtA()).map((m) => [m.status, m.readAt])).toEqual([["delivered", null], ["delivered", null], ["delivered", null]]);
    // A simulated message from the same number, last: it has no sender to tell, the others still do.
    expect((await inbound(k.key, b.id, a.phoneNumber!, "simulated")).status).toBe(201);
    expect((await listChats(k.key, `sessionId=${b.id}`)).data[0]).toMatchObject({ id: a.me!.chatId, unreadCount: 4 });

    const read = await api(`/api/chats/${a.me!.chatId}/read`, { method: "POST", key: k.key, json: { sessionId: b.id } });
    expect(read.status).toBe(200);
    expect(await json(read)).toMatchObject({ id: a.me!.chatId, unreadCount: 0 });
    // The read receipt is in before the answer: the sender's messages are read, the reader's inbound copies stamped.
    const atA = await statusesAtA();
    expect(atA).toHaveLength(3);
    expect(atA.every((m) => m.status === "read" && m.readAt !== null)).toBe(true);
    const atB = await json<{ data: MessageJson[] }>(await api(`/api/messages/${a.me!.chatId}?sessionId=${b.id}`, { key: k.key }));
    expect(atB.data.map((m) => [m.direction, m.status, m.readAt !== null])).toEqual(Array.from({ length: 4 }, () => ["inbound", "received", true]));
    const readEvents = () => eventsOf(k.accountId, "message.read").filter((e) => ids.includes((e.data as { id: string }).id));
    await waitFor(() => readEvents().length >= 3, 10_000, "message.read events");
    expect(readEvents().map((e) => e.sessionId)).toEqual([a.id, a.id, a.id]);

    // A later message is read by the next read only; nothing is announced twice.
    const four = await sendText(k.key, a.id, b.me!.chatId, "four");
    await waitFor(async () => (await statusesAtA()).find((m) => m.id === four.id)?.status === "delivered", 10_000, "fourth delivered");
    expect((await api(`/api/chats/${a.me!.chatId}/read`, { method: "POST", key: k.key, json: { sessionId: b.id } })).status).toBe(200);
    expect((await statusesAtA()).find((m) => m.id === four.id)).toMatchObject({ status: "read" });
    await waitFor(() => eventsOf(k.accountId, "message.read").some((e) => (e.data as { id: string }).id === four.id), 10_000, "fourth read event");
    await new Promise((r) => setTimeout(r, 300));
    expect(readEvents()).toHaveLength(3);
    expect(eventsOf(k.accountId, "message.read").filter((e) => (e.data as { id: string }).id === four.id)).toHaveLength(1);
  });

  it("sandbox: reading a chat with more unread messages than one batch (400) reads them all at the sender, each announced once", { timeout: 90_000 }, async () => {
    const k = await createKey("pro");
    const a = await sandboxSession(k.key);
    const b = await sandboxSession(k.key);
    const n = 450;
    const bulk = await api("/api/messages/send-bulk", { method: "POST", key: k.key, json: { sessionId: a.id, messages: Array.from({ length: n }, (_, i) => ({ to: b.me!.chatId, text: `m${i}` })) } });
    expect(bulk.status).toBe(202);
    const { batchId } = await json<{ batchId: string }>(bulk);
    const progress = async () => json<{ total: number; delivered: number; read: number }>(await api(`/api/messages/batches/${batchId}`, { key: k.key }));
    await waitFor(async () => (await listChats(k.key, `sessionId=${b.id}`)).data[0]?.unreadCount === n, 20_000, "all arrived at b");
    await waitFor(async () => (await progress()).delivered === n, 10_000, "all delivered");
    expect((await api(`/api/chats/${a.me!.chatId}/read`, { method: "POST", key: k.key, json: { sessionId: b.id } })).status).toBe(200);
    expect(await progress()).toMatchObject({ total: n, delivered: 0, read: n });
    const readIds = () => eventsOf(k.accountId, "message.read").map((e) => (e.data as { id: string }).id);
    // behind the sent and delivered events of all n in the events queue (about 15 s when this test runs alone)
    await waitFor(() => readIds().length >= n, 40_000, "message.read events");
    // a second announcement of a message would come through the same queue: give it time to
    await new Promise((r) => setTimeout(r, 500));
    const times = new Map<string, number>();
    for (const id of readIds()) times.set(id, (times.get(id) ?? 0) + 1);
    expect(times.size).toBe(n);
    expect([...times].filter(([, count]) => count !== 1)).toEqual([]);
  });
});
