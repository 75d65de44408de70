import { describe, expect, it } from "vitest";
import { api, createKey, firstOnShards } from "../helpers.ts";
import { eventsOf, getMessage, json, waitFor, type MessageJson } from "./support.ts";
import { openWindows, postHook, webhookWith, whatsappSession } from "./whatsapp-support.ts";
import { createCampaign, recipients, watch } from "../campaigns/support.ts";

/**
 * Meta's 2026 webhook as a subscribed app receives it: senders named only by their BSUID, system
 * messages (number and BSUID changes), messages echoed from the WhatsApp Business app, calls. Each
 * payload is checked real-shaped by postHook.
 */
const FROM = "16505551234";
const NEW = "16505559999";
const USER = "US.13491208655302741918";
const now = () => Math.floor(Date.now() / 1000);
const field = (field: string, value: Record<string, unknown>) => ({ object: "whatsapp_business_account", entry: [{ id: "419561257915477", changes: [{ field, value }] }] });
const meta = (phoneNumberId: string) => ({ display_phone_number: "15550783881", phone_number_id: phoneNumberId });

async function history(key: string, sessionId: string, chatId: string): Promise<MessageJson[]> {
  return (await json<{ data: MessageJson[] }>(await api(`/api/messages/${chatId}?limit=100&sessionId=${sessionId}`, { key }))).data;
}
async function contacts(key: string) {
  return (await json<{ data: { id: string; phone: string; identity: Record<string, string> | null; optedOut: boolean }[] }>(await api("/api/contacts", { key }))).data;
}
async function chats(key: string, sessionId: string) {
  return (await json<{ data: { id: string; unreadCount: number }[] }>(await api(`/api/chats?sessionId=${sessionId}`, { key }))).data;
}

/** A text from FROM that introduces their BSUID (the contacts entry names both). */
function introduce(phoneNumberId: string, id: string) {
  return webhookWith(phoneNumberId, {
    contacts: [{ profile: { name: "Sheena Nelson" }, wa_id: FROM, user_id: USER }],
    messages: [{ from: FROM, from_user_id: USER, id, timestamp: String(now()), type: "text", text: { body: "hi" } }],
  });
}

describe("WhatsApp 2026 webhook: BSUIDs, system messages, echoes, calls", () => {
  it("a message, a status and a preference naming only the BSUID land on the contact's number and chat", async () => {
    const k = await createKey("pro");
    const { phone, session } = await whatsappSession(k.key);
    expect((await postHook(session.id, introduce(phone.phoneNumberId, "wamid.intro"))).status).toBe(200);
    const onlyUser = webhookWith(phone.phoneNumberId, {
      contacts: [{ profile: { name: "Sheena Nelson", username: "@sheena" }, user_id: USER }],
      messages: [{ from_user_id: USER, id: "wamid.bsuid", timestamp: String(now()), type: "text", text: { body: "number withheld" } }],
    });
    expect((await postHook(session.id, onlyUser)).status).toBe(200);
    const all = await history(k.key, session.id, `${FROM}@c.us`);
    expect(all.map((m) => m.text)).toEqual(["number withheld", "hi"]);
    expect(await contacts(k.key)).toEqual([expect.objectContaining({ phone: `+${FROM}`, identity: expect.objectContaining({ userId: USER, username: "@sheena" }) })]);

    // A reply's status names the recipient by BSUID only: it still finds its message (by the network's id).
    // A send may name the recipient by BSUID: it goes to the contact's number and chat.
    const res = await api("/api/messages/send", { method: "POST", key: k.key, json: { sessionId: session.id, to: USER, text: "thanks" } });
    expect(res.status).toBe(201);
    const sent = await json<MessageJson>(res);
    expect(sent).toMatchObject({ chatId: `${FROM}@c.us`, status: "sent" });
    const wamid = (await firstOnShards<{ external_id: string }>("SELECT external_id FROM messages WHERE id = ?", sent.id))!.external_id;
    await postHook(session.id, webhookWith(phone.phoneNumberId, { statuses: [{ id: wamid, status: "delivered", timestamp: String(now()), recipient_user_id: USER }] }));
    expect(await getMessage(k.key, `${FROM}@c.us`, sent.id)).toMatchObject({ status: "delivered" });

    const pref = field("user_preferences", {
      messaging_product: "whatsapp",
      metadata: meta(phone.phoneNumberId),
      user_preferences: [{ user_id: USER, detail: "User requested to stop marketing messages", category: "marketing_messages", value: "stop", timestamp: now() }],
    });
    expect((await postHook(session.id, pref)).status).toBe(200);
    expect((await contacts(k.key))[0]).toMatchObject({ optedOut: true });
  });

  it("user_changed_number: a system message in the chat, then the contact and the chat (history included) move to the new number; once", async () => {
    const k = await createKey("pro");
    const { phone, session } = await whatsappSession(k.key);
    await postHook(session.id, introduce(phone.phoneNumberId, "wamid.before"));
    const change = webhookWith(phone.phoneNumberId, {
      messages: [
        {
          from: FROM,
          id: "wamid.sys",
          timestamp: String(now()),
          type: "system",
          system: { body: `User Sheena Nelson changed from ${FROM} to ${NEW}`, wa_id: NEW, type: "user_changed_number", user_id: "US.77771208655302741918", previous_user_id: USER },
        },
      ],
    });
    expect((await postHook(session.id, change)).status).toBe(200);
    expect((await postHook(session.id, change)).status).toBe(200);
    expect(await history(k.key, session.id, `${FROM}@c.us`)).toEqual([]);
    const moved = await history(k.key, session.id, `${NEW}@c.us`);
    expect(moved.map((m) => m.type)).toEqual(["system", "text"]);
    expect(moved[0]).toMatchObject({ direction: "inbound", system: { kind: "user_changed_number", newChatId: `${NEW}@c.us`, userId: "US.77771208655302741918" } });
    expect(await contacts(k.key)).toEqual([expect.objectContaining({ phone: `+${NEW}`, identity: { userId: "US.77771208655302741918" } })]);
    // One chat, and the notice is not an unread message of the person's.
    expect(await chats(k.key, session.id)).toEqual([expect.objectContaining({ id: `${NEW}@c.us`, unreadCount: 1 })]);
    const event = await waitFor(() => eventsOf(k.accountId, "contact.identity_changed")[0], 10_000, "contact.identity_changed");
    expect(event.data).toMatchObject({ kind: "user_changed_number", chatMoved: true, chatId: `${NEW}@c.us`, previous: { phone: `+${FROM}`, chatId: `${FROM}@c.us`, identity: { userId: USER } }, contact: { phone: `+${NEW}` } });
    await new Promise((r) => setTimeout(r, 300));
    expect(eventsOf(k.accountId, "contact.identity_changed")).toHaveLength(1);
  });

  it("user_changed_user_id: the contact keeps its number and takes the new BSUID", async () => {
    const k = await createKey("pro");
    const { phone, session } = await whatsappSession(k.key);
    await postHook(session.id, introduce(phone.phoneNumberId, "wamid.first"));
    const change = webhookWith(phone.phoneNumberId, {
      messages: [{ from: FROM, id: "wamid.sys2", timestamp: String(now()), type: "system", system: { body: "User changed their user id", type: "user_changed_user_id", user_id: "US.55551208655302741918", previous_user_id: USER } }],
    });
    expect((await postHook(session.id, change)).status).toBe(200);
    expect(await contacts(k.key)).toEqual([expect.objectContaining({ phone: `+${FROM}`, identity: { userId: "US.55551208655302741918" } })]);
    const event = await waitFor(() => eventsOf(k.accountId, "contact.identity_changed")[0], 10_000, "contact.identity_changed");
    expect(event.data).toMatchObject({ kind: "user_changed_user_id", chatMoved: false, chatId: `${FROM}@c.us`, previous: { identity: { userId: USER } } });
  });

  it("a message sent from the WhatsApp Business app is recorded as outbound (source business_app, message.sent), once", async () => {
    const k = await createKey("pro");
    const { phone, session } = await whatsappSession(k.key);
    const t = now();
    const echo = field("smb_message_echoes", {
      messaging_product: "whatsapp",
      metadata: meta(phone.phoneNumberId),
      message_echoes: [{ from: "15550783881", to: FROM, id: "wamid.echo1", timestamp: String(t), type: "text", text: { body: "sent from the app" } }],
    });
    expect((await postHook(session.id, echo)).status).toBe(200);
    expect((await postHook(session.id, echo)).status).toBe(200);
    const all = await history(k.key, session.id, `${FROM}@c.us`);
    expect(all).toEqual([expect.objectContaining({ direction: "outbound", status: "sent", type: "text", text: "sent from the app", source: "business_app", sentAt: new Date(t * 1000).toISOString() })]);
    expect(await chats(k.key, session.id)).toEqual([expect.objectContaining({ id: `${FROM}@c.us`, unreadCount: 0 })]);
    await waitFor(() => eventsOf(k.accountId, "message.sent").length === 1, 10_000, "message.sent");
    await new Promise((r) => setTimeout(r, 300));
    expect(eventsOf(k.accountId, "message.sent")).toHaveLength(1);
    // An echo opens no customer-service window: a free-form send is still refused.
    const send = await api("/api/messages/send", { method: "POST", key: k.key, json: { sessionId: session.id, to: FROM, text: "x" } });
    expect(send.status).toBe(409);
    expect(await json(send)).toMatchObject({ error: { code: "reengagement_window_closed" } });
  });

  it("calls become call.started and call.ended events", async () => {
    const k = await createKey("pro");
    const { phone, session } = await whatsappSession(k.key);
    const t = now();
    const calls = (call: Record<string, unknown>) => field("calls", { messaging_product: "whatsapp", metadata: meta(phone.phoneNumberId), contacts: [{ profile: { name: "Sheena Nelson" }, wa_id: FROM }], calls: [call] });
    expect((await postHook(session.id, calls({ id: "wacid.ABC", from: FROM, to: "15550783881", event: "connect", direction: "USER_INITIATED", timestamp: String(t) }))).status).toBe(200);
    expect(
      (await postHook(session.id, calls({ id: "wacid.ABC", from: FROM, to: "15550783881", event: "terminate", direction: "USER_INITIATED", timestamp: String(t + 60), status: "COMPLETED", start_time: String(t + 5), end_time: String(t + 60), duration: 55 }))).status,
    ).toBe(200);
    const started = await waitFor(() => eventsOf(k.accountId, "call.started")[0], 10_000, "call.started");
    expect(started.data).toMatchObject({ id: "wacid.ABC", sessionId: session.id, chatId: `${FROM}@c.us`, direction: "inbound", event: "connect" });
    const ended = await waitFor(() => eventsOf(k.accountId, "call.ended")[0], 10_000, "call.ended");
    expect(ended.data).toMatchObject({ event: "terminate", status: "COMPLETED", durationSeconds: 55, startedAt: new Date((t + 5) * 1000).toISOString() });
    // Calls are not messages.
    expect(await history(k.key, session.id, `${FROM}@c.us`)).toEqual([]);
  });

  it("campaign stats sum what statuses report billable, per pricing category", async () => {
    const k = await createKey("pro");
    const { phone, session } = await whatsappSession(k.key);
    const numbers = ["16505550101", "16505550102", "16505550103"];
    await openWindows(session.id, phone.phoneNumberId, numbers);
    const c = await createCampaign(k.key, { sessionId: session.id, message: { text: "Spring sale" }, audience: { all: true }, pacing: { perMinute: 6000, jitterPct: 0 } });
    expect((await api(`/api/campaigns/${c.id}/start`, { method: "POST", key: k.key })).status).toBe(200);
    await watch(k.key, c.id, (x) => x.status === "completed" && x.stats.sent === 3);
    const ids = (await recipients(k.key, c.id)).map((r) => r.messageId!);
    const wamids = await Promise.all(ids.map(async (id) => (await firstOnShards<{ external_id: string }>("SELECT external_id FROM messages WHERE id = ?", id))!.external_id));
    const t = now();
    const pricing = [
      { billable: true, pricing_model: "PMP", category: "marketing", type: "regular" },
      { billable: true, pricing_model: "PMP", category: "marketing", type: "regular" },
      { billable: false, pricing_model: "PMP", category: "service", type: "free_customer_service" },
    ];
    const statuses = wamids.map((id, i) => ({ id, status: "delivered", timestamp: String(t), recipient_id: numbers[i], pricing: pricing[i] }));
    expect((await postHook(session.id, webhookWith(phone.phoneNumberId, { statuses }))).status).toBe(200);
    const { last } = await watch(k.key, c.id, (x) => x.stats.delivered === 3);
    expect(last.stats.charges).toEqual({ billable: 2, byCategory: { marketing: 2 } });
    expect(await getMessage(k.key, `${numbers[2]}@c.us`, ids[2]!)).toMatchObject({ pricing: { category: "service", billable: false, model: "PMP", type: "free_customer_service" } });
  });
});
