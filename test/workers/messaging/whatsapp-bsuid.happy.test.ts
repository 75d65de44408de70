import { describe, expect, it } from "vitest";
import { api, createKey, firstOnShards } from "../helpers.ts";
import { eventsOf, fakeRequests, getMessage, json, waitFor, type MessageJson } from "./support.ts";
import { postHook, webhookWith, whatsappSession } from "./whatsapp-support.ts";
import { createCampaign, recipients, watch } from "../campaigns/support.ts";

/**
 * People WhatsApp names only by their business-scoped user id (BSUID, no number): a contact and a
 * chat `<BSUID>@bsuid` of their own, replies to the BSUID, and the number taken over when the network
 * names it later. Also what else follows a person's move (reactions) and replayed calls. Each payload
 * is checked real-shaped by postHook; each send by the fake Graph API.
 */
const ANON = "US.50501208655302741918";
const CHAT = `${ANON}@bsuid`;
const NUM = "16505554321";
const now = () => Math.floor(Date.now() / 1000);
const field = (field: string, value: Record<string, unknown>) => ({ object: "whatsapp_business_account", entry: [{ id: "419561257915477", changes: [{ field, value }] }] });
const meta = (phoneNumberId: string) => ({ display_phone_number: "15550783881", phone_number_id: phoneNumberId });

/** A message from ANON with the number withheld (a username instead). */
function fromAnon(phoneNumberId: string, id: string, message: Record<string, unknown> = { type: "text", text: { body: "hello, no number" } }) {
  return webhookWith(phoneNumberId, {
    contacts: [{ profile: { name: "Anon", username: "@anon" }, user_id: ANON }],
    messages: [{ from_user_id: ANON, id, timestamp: String(now()), ...message }],
  });
}

async function history(key: string, sessionId: string, chatId: string): Promise<MessageJson[]> {
  const res = await api(`/api/messages/${chatId}?limit=100&sessionId=${sessionId}`, { key });
  expect(res.status).toBe(200);
  return (await json<{ data: MessageJson[] }>(res)).data;
}
async function contacts(key: string) {
  return (await json<{ data: { id: string; phone: string | null; chatId: string; name: string | null; identity: Record<string, string> | null }[] }>(await api("/api/contacts", { key }))).data;
}
async function chats(key: string, sessionId: string) {
  return (await json<{ data: { id: string; unreadCount: number; contact: { id: string } | null }[] }>(await api(`/api/chats?sessionId=${sessionId}`, { key }))).data;
}
const sends = async (phoneNumberId: string) => (await fakeRequests(phoneNumberId)).filter((r) => r.method === "POST" && r.path.endsWith("/messages") && r.body && !("status" in r.body));
const wamidOf = async (id: string) => (await firstOnShards<{ external_id: string }>("SELECT external_id FROM messages WHERE id = ?", id))!.external_id;

describe("WhatsApp: people known only by BSUID", () => {
  it("a first message lands: a contact without a number, the chat <BSUID>@bsuid, its events; a reply goes to the BSUID; a replay stores nothing new", async () => {
    const k = await createKey("pro");
    const { phone, session } = await whatsappSession(k.key);
    expect((await postHook(session.id, fromAnon(phone.phoneNumberId, "wamid.anon1"))).status).toBe(200);
    expect((await postHook(session.id, fromAnon(phone.phoneNumberId, "wamid.anon1"))).status).toBe(200);
    const [contact, ...more] = await contacts(k.key);
    expect(more).toEqual([]);
    expect(contact).toMatchObject({ phone: null, chatId: CHAT, name: "Anon", identity: { userId: ANON, username: "@anon" } });
    expect((await history(k.key, session.id, CHAT)).map((m) => [m.direction, m.text, m.chatId])).toEqual([["inbound", "hello, no number", CHAT]]);
    expect(await chats(k.key, session.id)).toEqual([expect.objectContaining({ id: CHAT, unreadCount: 1, contact: expect.objectContaining({ id: contact!.id }) })]);
    const received = await waitFor(() => eventsOf(k.accountId, "message.received")[0], 10_000, "message.received");
    expect(received.data).toMatchObject({ chatId: CHAT, text: "hello, no number" });
    expect((await waitFor(() => eventsOf(k.accountId, "contact.created")[0], 10_000, "contact.created")).data).toMatchObject({ phone: null, chatId: CHAT });

    // A reply by the chat id, and one by the bare BSUID: both in the chat, both sent to the BSUID (no `to`).
    for (const to of [CHAT, ANON]) {
      const res = await api("/api/messages/send", { method: "POST", key: k.key, json: { sessionId: session.id, to, text: `reply via ${to}` } });
      expect(res.status).toBe(201);
      expect(await json(res)).toMatchObject({ chatId: CHAT, status: "sent" });
    }
    const bodies = (await sends(phone.phoneNumberId)).map((r) => r.body!);
    expect(bodies).toEqual([expect.objectContaining({ recipient: ANON, text: { body: `reply via ${CHAT}`, preview_url: false } }), expect.objectContaining({ recipient: ANON })]);
    expect(bodies.every((b) => !("to" in b))).toBe(true);
    // The chat reads like any other.
    const read = await api(`/api/chats/${CHAT}/read`, { method: "POST", key: k.key, json: { sessionId: session.id } });
    expect(read.status).toBe(200);
    expect(await json(read)).toMatchObject({ id: CHAT, unreadCount: 0 });
    await new Promise((r) => setTimeout(r, 300));
    expect(eventsOf(k.accountId, "contact.created")).toHaveLength(1);
    expect(eventsOf(k.accountId, "message.received")).toHaveLength(1);
  });

  it("the same BSUID later named with a number: one contact and one chat take the number, history and reactions with them", async () => {
    const k = await createKey("pro");
    const { phone, session } = await whatsappSession(k.key);
    await postHook(session.id, fromAnon(phone.phoneNumberId, "wamid.a1"));
    const sent = await json<MessageJson>(await api("/api/messages/send", { method: "POST", key: k.key, json: { sessionId: session.id, to: CHAT, text: "how can we help?" } }));
    await postHook(session.id, fromAnon(phone.phoneNumberId, "wamid.a2", { type: "reaction", reaction: { message_id: await wamidOf(sent.id), emoji: "\u{1F44D}" } }));
    expect(await getMessage(k.key, CHAT, sent.id, session.id)).toMatchObject({ reactions: [{ from: CHAT, emoji: "\u{1F44D}" }] });

    const withNumber = webhookWith(phone.phoneNumberId, {
      contacts: [{ profile: { name: "Anon", username: "@anon" }, wa_id: NUM, user_id: ANON }],
      messages: [{ from: NUM, from_user_id: ANON, id: "wamid.a3", timestamp: String(now()), type: "text", text: { body: "here is my number" } }],
    });
    expect((await postHook(session.id, withNumber)).status).toBe(200);
    expect((await postHook(session.id, withNumber)).status).toBe(200);
    const all = await contacts(k.key);
    expect(all).toEqual([expect.objectContaining({ phone: `+${NUM}`, chatId: `${NUM}@c.us`, identity: { userId: ANON, username: "@anon" } })]);
    expect(await history(k.key, session.id, CHAT)).toEqual([]);
    expect((await history(k.key, session.id, `${NUM}@c.us`)).map((m) => m.type)).toEqual(["text", "reaction", "text", "text"]);
    expect(await chats(k.key, session.id)).toEqual([expect.objectContaining({ id: `${NUM}@c.us`, contact: expect.objectContaining({ id: all[0]!.id }) })]);
    expect(await getMessage(k.key, `${NUM}@c.us`, sent.id, session.id)).toMatchObject({ reactions: [{ from: `${NUM}@c.us`, emoji: "\u{1F44D}" }] });
    const change = await waitFor(() => eventsOf(k.accountId, "contact.identity_changed")[0], 10_000, "contact.identity_changed");
    expect(change.data).toMatchObject({ kind: "user_number_known", chatMoved: true, chatId: `${NUM}@c.us`, previous: { phone: null, chatId: CHAT, identity: { userId: ANON } }, contact: { phone: `+${NUM}` } });

    // A message naming only the BSUID now lands in the number's chat, and a send by BSUID goes to the number.
    await postHook(session.id, fromAnon(phone.phoneNumberId, "wamid.a4"));
    expect(await history(k.key, session.id, CHAT)).toEqual([]);
    const res = await api("/api/messages/send", { method: "POST", key: k.key, json: { sessionId: session.id, to: ANON, text: "got it" } });
    expect(await json(res)).toMatchObject({ chatId: `${NUM}@c.us` });
    expect((await sends(phone.phoneNumberId)).at(-1)!.body).toMatchObject({ to: NUM, text: { body: "got it", preview_url: false } });
    await new Promise((r) => setTimeout(r, 300));
    expect(eventsOf(k.accountId, "contact.identity_changed")).toHaveLength(1);
  });

  it("named with a number another contact already has: that contact is the person's (it takes the BSUID), the number-less one goes", async () => {
    const k = await createKey("pro");
    const { phone, session } = await whatsappSession(k.key);
    const made = await json<{ id: string }>(await api("/api/contacts", { method: "POST", key: k.key, json: { phone: `+${NUM}`, name: "Known as a number", tags: ["vip"] } }));
    await postHook(session.id, fromAnon(phone.phoneNumberId, "wamid.m1"));
    expect(await contacts(k.key)).toHaveLength(2);
    const withNumber = webhookWith(phone.phoneNumberId, { contacts: [{ profile: { name: "Anon" }, wa_id: NUM, user_id: ANON }], messages: [{ from: NUM, from_user_id: ANON, id: "wamid.m2", timestamp: String(now()), type: "text", text: { body: "it's me" } }] });
    expect((await postHook(session.id, withNumber)).status).toBe(200);
    expect(await contacts(k.key)).toEqual([expect.objectContaining({ id: made.id, phone: `+${NUM}`, name: "Known as a number", identity: expect.objectContaining({ userId: ANON }) })]);
    expect((await history(k.key, session.id, `${NUM}@c.us`)).map((m) => m.text)).toEqual(["it's me", "hello, no number"]);
    expect(await chats(k.key, session.id)).toEqual([expect.objectContaining({ id: `${NUM}@c.us` })]);
  });

  it("a person known only by BSUID who gets a new BSUID moves to the new BSUID's chat; once", async () => {
    const k = await createKey("pro");
    const { phone, session } = await whatsappSession(k.key);
    const NEWU = "US.70701208655302741918";
    await postHook(session.id, fromAnon(phone.phoneNumberId, "wamid.c1"));
    const change = webhookWith(phone.phoneNumberId, { messages: [{ from_user_id: ANON, id: "wamid.c2", timestamp: String(now()), type: "system", system: { body: "User changed their user id", type: "user_changed_user_id", user_id: NEWU, previous_user_id: ANON } }] });
    expect((await postHook(session.id, change)).status).toBe(200);
    expect((await postHook(session.id, change)).status).toBe(200);
    expect(await history(k.key, session.id, CHAT)).toEqual([]);
    expect((await history(k.key, session.id, `${NEWU}@bsuid`)).map((m) => m.type)).toEqual(["system", "text"]);
    expect(await contacts(k.key)).toEqual([expect.objectContaining({ phone: null, chatId: `${NEWU}@bsuid`, identity: { userId: NEWU, username: "@anon" } })]);
    const event = await waitFor(() => eventsOf(k.accountId, "contact.identity_changed")[0], 10_000, "contact.identity_changed");
    expect(event.data).toMatchObject({ kind: "user_changed_user_id", chatMoved: true, chatId: `${NEWU}@bsuid`, previous: { phone: null, chatId: CHAT } });
    // A reply by the new BSUID goes to it.
    expect(await json(await api("/api/messages/send", { method: "POST", key: k.key, json: { sessionId: session.id, to: NEWU, text: "ok" } }))).toMatchObject({ chatId: `${NEWU}@bsuid` });
    expect((await sends(phone.phoneNumberId)).at(-1)!.body).toMatchObject({ recipient: NEWU });
    await new Promise((r) => setTimeout(r, 300));
    expect(eventsOf(k.accountId, "contact.identity_changed")).toHaveLength(1);
  });

  it("bulk sends and campaigns take BSUIDs: a contact's goes to its number, a number-less one's to the BSUID", async () => {
    const k = await createKey("pro");
    const { phone, session } = await whatsappSession(k.key);
    const KNOWN = "US.60601208655302741918";
    await postHook(session.id, webhookWith(phone.phoneNumberId, { contacts: [{ profile: { name: "Known" }, wa_id: NUM, user_id: KNOWN }], messages: [{ from: NUM, from_user_id: KNOWN, id: "wamid.k1", timestamp: String(now()), type: "text", text: { body: "hi" } }] }));
    await postHook(session.id, fromAnon(phone.phoneNumberId, "wamid.b1"));
    const bulk = await api("/api/messages/send-bulk", { method: "POST", key: k.key, json: { sessionId: session.id, messages: [{ to: KNOWN, text: "one" }, { to: ANON, text: "two" }, { to: CHAT, text: "three" }] } });
    expect(bulk.status).toBe(202);
    expect(await json(bulk)).toMatchObject({ accepted: 3, rejected: [] });
    await waitFor(async () => (await sends(phone.phoneNumberId)).length >= 3, 15_000, "three bulk sends");
    const byText = new Map((await sends(phone.phoneNumberId)).map((r) => [(r.body!.text as { body: string }).body, r.body!]));
    expect(byText.get("one")).toMatchObject({ to: NUM });
    expect(byText.get("two")).toMatchObject({ recipient: ANON });
    expect(byText.get("three")).toMatchObject({ recipient: ANON });
    expect((await history(k.key, session.id, CHAT)).filter((m) => m.direction === "outbound")).toHaveLength(2);

    // A campaign's audience by BSUID (in that order), and by contact id: each person once.
    const anon = (await contacts(k.key)).find((c) => c.phone === null)!;
    const c = await createCampaign(k.key, { sessionId: session.id, message: { text: "Hi {{name}}, {{phone|no number}}" }, audience: { userIds: [ANON, KNOWN], contactIds: [anon.id] }, pacing: { perMinute: 6000, jitterPct: 0 } });
    expect((await api(`/api/campaigns/${c.id}/start`, { method: "POST", key: k.key })).status).toBe(200);
    await watch(k.key, c.id, (x) => x.status === "completed" && x.stats.sent === 2);
    expect(await recipients(k.key, c.id)).toEqual([
      expect.objectContaining({ phone: null, chatId: CHAT, status: "sent" }),
      expect.objectContaining({ phone: `+${NUM}`, chatId: `${NUM}@c.us`, status: "sent" }),
    ]);
    const last = (await sends(phone.phoneNumberId)).slice(-2).map((r) => r.body);
    expect(last).toEqual([expect.objectContaining({ recipient: ANON, text: { body: "Hi Anon, no number", preview_url: false } }), expect.objectContaining({ to: NUM, text: { body: `Hi Known, +${NUM}`, preview_url: false } })]);
  });

  it("a number change moves the person's reactions with their chat", async () => {
    const k = await createKey("pro");
    const { phone, session } = await whatsappSession(k.key);
    const NEW = "16505559999";
    await postHook(session.id, webhookWith(phone.phoneNumberId, { contacts: [{ profile: { name: "Sheena" }, wa_id: NUM }], messages: [{ from: NUM, id: "wamid.r1", timestamp: String(now()), type: "text", text: { body: "hi" } }] }));
    const sent = await json<MessageJson>(await api("/api/messages/send", { method: "POST", key: k.key, json: { sessionId: session.id, to: NUM, text: "hello" } }));
    await postHook(session.id, webhookWith(phone.phoneNumberId, { contacts: [{ profile: { name: "Sheena" }, wa_id: NUM }], messages: [{ from: NUM, id: "wamid.r2", timestamp: String(now()), type: "reaction", reaction: { message_id: await wamidOf(sent.id), emoji: "\u2764\uFE0F" } }] }));
    const change = webhookWith(phone.phoneNumberId, { messages: [{ from: NUM, id: "wamid.r3", timestamp: String(now()), type: "system", system: { body: `User Sheena changed from ${NUM} to ${NEW}`, wa_id: NEW, type: "user_changed_number" } }] });
    expect((await postHook(session.id, change)).status).toBe(200);
    expect(await getMessage(k.key, `${NEW}@c.us`, sent.id, session.id)).toMatchObject({ reactions: [{ from: `${NEW}@c.us`, emoji: "\u2764\uFE0F" }] });
    // The person changes the reaction afterwards (from the new number): one reaction of theirs, the new one.
    await postHook(session.id, webhookWith(phone.phoneNumberId, { contacts: [{ profile: { name: "Sheena" }, wa_id: NEW }], messages: [{ from: NEW, id: "wamid.r4", timestamp: String(now()), type: "reaction", reaction: { message_id: await wamidOf(sent.id), emoji: "\u{1F389}" } }] }));
    expect(await getMessage(k.key, `${NEW}@c.us`, sent.id, session.id)).toMatchObject({ reactions: [{ from: `${NEW}@c.us`, emoji: "\u{1F389}" }] });
  });

  it("a replayed calls webhook announces each call's start and end once; a BSUID-only caller's call is in their chat", async () => {
    const k = await createKey("pro");
    const { phone, session } = await whatsappSession(k.key);
    const t = now();
    const calls = (call: Record<string, unknown>) => field("calls", { messaging_product: "whatsapp", metadata: meta(phone.phoneNumberId), contacts: [{ profile: { name: "Anon" }, user_id: ANON }], calls: [call] });
    const connect = calls({ id: "wacid.R1", from_user_id: ANON, to: "15550783881", event: "connect", direction: "USER_INITIATED", timestamp: String(t) });
    const terminate = calls({ id: "wacid.R1", from_user_id: ANON, to: "15550783881", event: "terminate", direction: "USER_INITIATED", timestamp: String(t + 30), status: "COMPLETED", duration: 25 });
    for (const p of [connect, connect, terminate, connect, terminate]) expect((await postHook(session.id, p)).status).toBe(200);
    const started = await waitFor(() => eventsOf(k.accountId, "call.started")[0], 10_000, "call.started");
    expect(started.data).toMatchObject({ id: "wacid.R1", chatId: CHAT, event: "connect" });
    await waitFor(() => eventsOf(k.accountId, "call.ended")[0], 10_000, "call.ended");
    await new Promise((r) => setTimeout(r, 500));
    expect(eventsOf(k.accountId, "call.started")).toHaveLength(1);
    expect(eventsOf(k.accountId, "call.ended")).toHaveLength(1);
  });
});
