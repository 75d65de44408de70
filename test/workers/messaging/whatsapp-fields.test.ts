import { describe, expect, it } from "vitest";
import { api, createKey, firstOnShards } from "../helpers.ts";
import { eventsOf, getMessage, json, waitFor, type MessageJson } from "./support.ts";
import { openWindows, postHook, webhookOf, webhookWith, whatsappSession } from "./whatsapp-support.ts";

/**
 * The webhook fields and message kinds beyond new messages and plain receipts, each posted as Meta
 * shapes it (postHook checks every payload against the reference document's webhook schema or the
 * supplement written from Meta's webhook reference).
 */
const FROM = "16505551234";
const CHAT = `${FROM}@c.us`;
const now = () => Math.floor(Date.now() / 1000);
const field = (field: string, value: Record<string, unknown>) => ({ object: "whatsapp_business_account", entry: [{ id: "419561257915477", changes: [{ field, value }] }] });
const history = async (key: string, sessionId: string) => (await json<{ data: MessageJson[] }>(await api(`/api/messages/${CHAT}?limit=100&sessionId=${sessionId}`, { key }))).data;

async function externalIdOf(messageId: string): Promise<string> {
  return (await firstOnShards<{ external_id: string }>("SELECT external_id FROM messages WHERE id = ?", messageId))!.external_id;
}

describe("WhatsApp webhook: edits, deletions, referrals, pricing, preferences, other fields", () => {
  it("an edit shows the message's new text with editedAt (message.edited); an older edit arriving later changes nothing", async () => {
    const k = await createKey("pro");
    const { phone, session } = await whatsappSession(k.key);
    const t = now();
    await postHook(session.id, webhookOf(phone.phoneNumberId, [{ from: FROM, id: "wamid.orig", timestamp: String(t), type: "text", text: { body: "See you at 5" } }]));
    const edit = (id: string, body: string, at: number) => webhookOf(phone.phoneNumberId, [{ from: FROM, id, timestamp: String(at), type: "edit", edit: { original_message_id: "wamid.orig", message: { type: "text", text: { body } } } }]);
    expect((await postHook(session.id, edit("wamid.edit2", "See you at 6", t + 20))).status).toBe(200);
    expect((await postHook(session.id, edit("wamid.edit1", "See you at 5:30", t + 10))).status).toBe(200);
    const all = await history(k.key, session.id);
    // The edit is not a message of its own.
    expect(all).toHaveLength(1);
    expect(all[0]).toMatchObject({ type: "text", text: "See you at 6", editedAt: new Date((t + 20) * 1000).toISOString() });
    const events = await waitFor(() => eventsOf(k.accountId, "message.edited").length >= 1 && eventsOf(k.accountId, "message.edited"), 10_000, "message.edited");
    await new Promise((r) => setTimeout(r, 500));
    expect(eventsOf(k.accountId, "message.edited")).toHaveLength(1);
    expect(events[0]!.data).toMatchObject({ id: all[0]!.id, text: "See you at 6" });
  });

  it("an edited caption changes the file's caption", async () => {
    const k = await createKey("pro");
    const { phone, session } = await whatsappSession(k.key);
    const t = now();
    await postHook(session.id, webhookOf(phone.phoneNumberId, [{ from: FROM, id: "wamid.img", timestamp: String(t), type: "image", image: { caption: "old", mime_type: "image/jpeg", sha256: "SfInY0gGKTsJlUWbwxC1k+FAD0FZHvzwfpvO0zX0GUI=", id: "1003383421387256" } }]));
    await postHook(session.id, webhookOf(phone.phoneNumberId, [{ from: FROM, id: "wamid.imgedit", timestamp: String(t + 5), type: "edit", edit: { original_message_id: "wamid.img", message: { type: "image", image: { caption: "new caption" } } } }]));
    const [m] = await history(k.key, session.id);
    expect(m).toMatchObject({ type: "image", media: { caption: "new caption" }, editedAt: expect.any(String) });
  });

  it("a revoke drops the message's content and marks it deleted (message.deleted, once)", async () => {
    const k = await createKey("pro");
    const { phone, session } = await whatsappSession(k.key);
    const t = now();
    await postHook(session.id, webhookOf(phone.phoneNumberId, [{ from: FROM, id: "wamid.secret", timestamp: String(t), type: "text", text: { body: "my card number is 4111" } }]));
    const revoke = webhookOf(phone.phoneNumberId, [{ from: FROM, id: "wamid.rev", timestamp: String(t + 3), type: "revoke", revoke: { original_message_id: "wamid.secret" } }]);
    expect((await postHook(session.id, revoke)).status).toBe(200);
    expect((await postHook(session.id, revoke)).status).toBe(200);
    const all = await history(k.key, session.id);
    expect(all).toHaveLength(1);
    expect(all[0]).toMatchObject({ type: "text", deletedAt: new Date((t + 3) * 1000).toISOString() });
    expect(all[0]!.text).toBeUndefined();
    expect(JSON.stringify(all[0])).not.toContain("4111");
    await waitFor(() => eventsOf(k.accountId, "message.deleted").length === 1, 10_000, "message.deleted");
    await new Promise((r) => setTimeout(r, 500));
    expect(eventsOf(k.accountId, "message.deleted")).toHaveLength(1);
    expect(JSON.stringify(eventsOf(k.accountId, "message.deleted")[0]!.data)).not.toContain("4111");
  });

  it("a message from a click-to-WhatsApp ad keeps its referral (the reference document's example)", async () => {
    const k = await createKey("pro");
    const { phone, session } = await whatsappSession(k.key);
    const referral = {
      source_url: "https://fb.me/3cr4Wqqkv",
      source_id: "120226305854810726",
      source_type: "ad",
      body: "Summer Succulents are here!",
      headline: "Chat with us",
      media_type: "image",
      image_url: "https://scontent.xx.fbcdn.net/v/t45.1...",
      ctwa_clid: "Aff-n8ZTODiE79d22KtAwQKj9e_mIEOOj27vDVwFjN80dp4",
      welcome_message: { text: "Hi there! Let us know how we can help!" },
    };
    await postHook(session.id, webhookOf(phone.phoneNumberId, [{ referral, from: FROM, id: "wamid.ad", timestamp: String(now()), text: { body: "Hello! Can I get more info on this?" }, type: "text" }]));
    const [m] = await history(k.key, session.id);
    expect(m).toMatchObject({ text: "Hello! Can I get more info on this?", referral: { sourceId: "120226305854810726", sourceType: "ad", headline: "Chat with us", ctwaClid: referral.ctwa_clid, sourceUrl: referral.source_url } });
  });

  it("statuses: pricing is kept on the message; a failure keeps Meta's code, title and details", async () => {
    const k = await createKey("pro");
    const { phone, session } = await whatsappSession(k.key);
    await openWindows(session.id, phone.phoneNumberId, [FROM]);
    const send = async () => json<MessageJson>(await api("/api/messages/send", { method: "POST", key: k.key, json: { sessionId: session.id, to: FROM, text: "x" } }));
    const [a, b] = [await send(), await send()];
    const t = now();
    const pricing = { billable: true, pricing_model: "PMP", category: "utility" };
    const conversation = { id: "c1b2c3", expiration_timestamp: String(t + 86400), origin: { type: "utility" } };
    await postHook(session.id, webhookWith(phone.phoneNumberId, { statuses: [{ id: await externalIdOf(a.id), status: "delivered", timestamp: String(t), recipient_id: FROM, conversation, pricing }] }));
    const errors = [{ code: 131049, title: "This message was not delivered to maintain healthy ecosystem engagement.", message: "This message was not delivered to maintain healthy ecosystem engagement.", error_data: { details: "In order to maintain a healthy ecosystem engagement, the message failed to be delivered." } }];
    await postHook(session.id, webhookWith(phone.phoneNumberId, { statuses: [{ id: await externalIdOf(b.id), status: "failed", timestamp: String(t), recipient_id: FROM, errors }] }));
    expect(await getMessage(k.key, CHAT, a.id)).toMatchObject({ status: "delivered", pricing: { category: "utility", billable: true, model: "PMP" } });
    expect(await getMessage(k.key, CHAT, b.id)).toMatchObject({
      status: "failed",
      error: { code: "ecosystem_limited" },
      networkError: { code: 131049, title: errors[0]!.title, details: errors[0]!.error_data.details },
    });
  });

  it("marketing preferences: stop opts the contact out (campaigns skip it), resume opts it back in", async () => {
    const k = await createKey("pro");
    const { phone, session } = await whatsappSession(k.key);
    await openWindows(session.id, phone.phoneNumberId, [FROM]);
    const pref = (value: "stop" | "resume") =>
      field("user_preferences", {
        messaging_product: "whatsapp",
        metadata: { display_phone_number: "15550783881", phone_number_id: phone.phoneNumberId },
        contacts: [{ profile: { name: "Sheena Nelson" }, wa_id: FROM }],
        user_preferences: [{ wa_id: FROM, detail: `User requested to ${value} marketing messages`, category: "marketing_messages", value, timestamp: now() }],
      });
    const contact = async () => (await json<{ data: { phone: string; optedOut: boolean }[] }>(await api("/api/contacts", { key: k.key }))).data.find((c) => c.phone === `+${FROM}`);
    expect(await contact()).toMatchObject({ optedOut: false });
    expect((await postHook(session.id, pref("stop"))).status).toBe(200);
    expect(await contact()).toMatchObject({ optedOut: true });
    expect((await postHook(session.id, pref("resume"))).status).toBe(200);
    expect(await contact()).toMatchObject({ optedOut: false });
  });

  it("account updates show on the session (restricted, banned, reinstated) with session.restricted; another number's are not this session's", async () => {
    const k = await createKey("pro");
    const { phone, session } = await whatsappSession(k.key);
    const own = phone.display;
    const update = (value: Record<string, unknown>) => ({ object: "whatsapp_business_account", entry: [{ id: "419561257915477", time: now(), changes: [{ field: "account_update", value }] }] });
    const health = async () => (await json<{ health: Record<string, unknown> | null; status: string }>(await api(`/api/sessions/${session.id}`, { key: k.key })));
    expect((await health()).health).toBeNull();
    const restriction = [{ restriction_type: "RESTRICTED_BIZ_INITIATED_MESSAGING", expiration: "2026-12-19T13:59:20+0000" }];
    // Another number of the same business account: not this session's.
    expect((await postHook(session.id, update({ phone_number: "15550009999", event: "ACCOUNT_RESTRICTION", restriction_info: restriction }))).status).toBe(200);
    expect((await health()).health).toBeNull();
    expect((await postHook(session.id, update({ phone_number: own, event: "ACCOUNT_RESTRICTION", restriction_info: restriction }))).status).toBe(200);
    expect(await health()).toMatchObject({ status: "WORKING", health: { state: "restricted", event: "ACCOUNT_RESTRICTION", restrictions: [{ type: "RESTRICTED_BIZ_INITIATED_MESSAGING", expiresAt: "2026-12-19T13:59:20+0000" }] } });
    const restricted = await waitFor(() => eventsOf(k.accountId, "session.restricted")[0], 10_000, "session.restricted");
    expect(restricted.data).toMatchObject({ id: session.id, health: { state: "restricted" } });
    // A ban of the whole business account (no phone number): this session's too.
    await postHook(session.id, update({ event: "DISABLED_UPDATE", ban_info: { waba_ban_state: "DISABLE", waba_ban_date: "2026-12-01" } }));
    expect((await health()).health).toMatchObject({ state: "banned", banDate: "2026-12-01" });
    await postHook(session.id, update({ event: "DISABLED_UPDATE", ban_info: { waba_ban_state: "REINSTATE", waba_ban_date: "2026-12-02" } }));
    expect((await health()).health).toMatchObject({ state: "ok" });
    await waitFor(() => eventsOf(k.accountId, "session.restricted").length === 2, 10_000, "two session.restricted");
  });

  it("identity: the contact keeps the sender's BSUID, parent BSUID and username beside the number, and a changed one", async () => {
    const k = await createKey("pro");
    const { phone, session } = await whatsappSession(k.key);
    const from = (userId: string, id: string) =>
      webhookWith(phone.phoneNumberId, {
        contacts: [{ profile: { name: "Sheena Nelson", username: "@sheena" }, wa_id: FROM, user_id: userId, parent_user_id: "US.ENT.11815799212886844830" }],
        messages: [{ from: FROM, from_user_id: userId, id, timestamp: String(now()), type: "text", text: { body: "hi" } }],
      });
    await postHook(session.id, from("US.13491208655302741918", "wamid.id1"));
    const contact = async () => (await json<{ data: { phone: string; identity: unknown }[] }>(await api("/api/contacts", { key: k.key }))).data.find((c) => c.phone === `+${FROM}`);
    expect(await contact()).toMatchObject({ identity: { userId: "US.13491208655302741918", parentUserId: "US.ENT.11815799212886844830", username: "@sheena" } });
    await postHook(session.id, from("US.99991208655302741918", "wamid.id2"));
    expect(await contact()).toMatchObject({ identity: { userId: "US.99991208655302741918" } });
  });

  it("fields that need nothing of the session are answered 200 and store nothing", async () => {
    const k = await createKey("pro");
    const { phone, session } = await whatsappSession(k.key);
    const meta = { display_phone_number: "15550783881", phone_number_id: phone.phoneNumberId };
    const payloads = [
      field("account_update", { event: "PARTNER_APP_INSTALLED" }),
      field("message_template_status_update", { event: "APPROVED", message_template_id: 920070352646140, message_template_name: "order_update", message_template_language: "en_US", reason: null, message_template_category: "UTILITY" }),
      field("message_template_quality_update", { previous_quality_score: "GREEN", new_quality_score: "YELLOW", message_template_id: 920070352646140, message_template_name: "order_update", message_template_language: "en_US" }),
      field("template_category_update", { message_template_id: 920070352646140, message_template_name: "order_update", message_template_language: "en_US", previous_category: "UTILITY", new_category: "MARKETING" }),
      // Another number's echoes are not this session's.
      field("smb_message_echoes", { messaging_product: "whatsapp", metadata: { ...meta, phone_number_id: "999" }, message_echoes: [{ from: "15550783881", to: FROM, id: "wamid.echo", timestamp: String(now()), type: "text", text: { body: "sent from the app" } }] }),
    ];
    for (const p of payloads) expect((await postHook(session.id, p)).status).toBe(200);
    expect(await history(k.key, session.id)).toEqual([]);
  });
});
