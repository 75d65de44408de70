import { describe, expect, it } from "vitest";
import { api, countOnShards, createKey } from "../helpers.ts";
import { eventsOf, json, type MessageJson } from "./support.ts";
import { postHook, postHookUnchecked, webhookWith, whatsappSession } from "./whatsapp-support.ts";

/** What Meta may send that cannot be recorded, and what it never sends: always 200, nothing stored as what it is not, never a 5xx. */
const FROM = "16505551234";
const now = () => Math.floor(Date.now() / 1000);
const field = (field: string, value: Record<string, unknown>) => ({ object: "whatsapp_business_account", entry: [{ id: "419561257915477", changes: [{ field, value }] }] });
const meta = (phoneNumberId: string) => ({ display_phone_number: "15550783881", phone_number_id: phoneNumberId });
const history = async (key: string, sessionId: string) => (await json<{ data: MessageJson[] }>(await api(`/api/messages/${FROM}@c.us?limit=100&sessionId=${sessionId}`, { key }))).data;

describe("WhatsApp webhook: fields and items that cannot be recorded", () => {
  it("a made-up field is acknowledged 200 and stores nothing", async () => {
    const k = await createKey("pro");
    const { phone, session } = await whatsappSession(k.key);
    const res = await postHookUnchecked(session.id, field("made_up_field_2027", { messaging_product: "whatsapp", metadata: meta(phone.phoneNumberId), things: [{ id: "x", from: FROM }] }));
    expect(res.status).toBe(200);
    expect(await history(k.key, session.id)).toEqual([]);
    expect(await countOnShards("SELECT count(*) AS n FROM events WHERE account_id = ? AND type <> 'session.connected'", k.accountId)).toBe(0);
  });

  it("sends naming a BSUID no contact has are a 400 naming it: single, bulk (nothing queued) and a campaign's audience", async () => {
    const k = await createKey("pro");
    const { session } = await whatsappSession(k.key);
    const UNKNOWN = "US.40401208655302741918";
    for (const to of [UNKNOWN, `${UNKNOWN}@bsuid`]) {
      const send = await api("/api/messages/send", { method: "POST", key: k.key, json: { sessionId: session.id, to, text: "x" } });
      expect(send.status).toBe(400);
      expect(await json(send)).toMatchObject({ error: { code: "invalid_request", message: expect.stringContaining(UNKNOWN) } });
    }
    const bulk = await api("/api/messages/send-bulk", { method: "POST", key: k.key, json: { sessionId: session.id, messages: [{ to: `+${FROM}`, text: "fine" }, { to: UNKNOWN, text: "x" }, { to: "GB.777", text: "y" }] } });
    expect(bulk.status).toBe(400);
    const body = await json<{ error: { message: string; details: unknown } }>(bulk);
    expect(body.error.message).toContain(UNKNOWN);
    expect(body.error.message).toContain("GB.777");
    expect(JSON.stringify(body.error)).toContain("messages.1.to");
    expect(await countOnShards("SELECT count(*) AS n FROM messages WHERE account_id = ?", k.accountId)).toBe(0);
    const campaign = await api("/api/campaigns", { method: "POST", key: k.key, json: { sessionId: session.id, name: "c", message: { text: "x" }, audience: { userIds: [UNKNOWN] } } });
    expect(campaign.status).toBe(400);
    expect(await json(campaign)).toMatchObject({ error: { code: "invalid_request", message: expect.stringContaining(UNKNOWN) } });
    const malformed = await api("/api/campaigns", { method: "POST", key: k.key, json: { sessionId: session.id, name: "c", message: { text: "x" }, audience: { userIds: ["not-a-bsuid"] } } });
    expect(malformed.status).toBe(400);
  });

  it("chat ids that are neither a number's nor <BSUID>@bsuid are a 400, never a 5xx", async () => {
    const k = await createKey("pro");
    const { session } = await whatsappSession(k.key);
    for (const chatId of ["us.123@bsuid", "US.@bsuid", "@bsuid", "US.1@bsuid@bsuid", "US.1%22%5D@bsuid", `US.${"1".repeat(129)}@bsuid`, "US.123@c.us", "16505551234@BSUID"]) {
      const res = await api(`/api/messages/${chatId}?sessionId=${session.id}`, { key: k.key });
      expect(res.status, chatId).toBe(400);
      const read = await api(`/api/chats/${chatId}/read`, { method: "POST", key: k.key, json: { sessionId: session.id } });
      expect(read.status, chatId).toBe(400);
    }
  });

  it("malformed system messages, echoes and calls are skipped: 200, nothing stored, no event", async () => {
    const k = await createKey("pro");
    const { phone, session } = await whatsappSession(k.key);
    const t = String(now());
    const payloads = [
      webhookWith(phone.phoneNumberId, { messages: [{ from: FROM, id: "wamid.s1", timestamp: t, type: "system", system: "not an object" }] }),
      field("smb_message_echoes", { messaging_product: "whatsapp", metadata: meta(phone.phoneNumberId), message_echoes: [{ from: "15550783881", id: "wamid.e1", timestamp: t, type: "text", text: { body: "no recipient" } }, null, 7] }),
      field("smb_message_echoes", { messaging_product: "whatsapp", metadata: meta(phone.phoneNumberId), message_echoes: "many" }),
      field("calls", { messaging_product: "whatsapp", metadata: meta(phone.phoneNumberId), calls: [{ id: "wacid.1", from: FROM, event: "explode", timestamp: t }, { id: 5, from: FROM, event: "connect" }, { id: "wacid.2", event: "connect" }] }),
      field("calls", { messaging_product: "whatsapp", metadata: meta(phone.phoneNumberId), calls: { id: "wacid.3" } }),
    ];
    for (const p of payloads) expect((await postHookUnchecked(session.id, p)).status).toBe(200);
    // The system message without a body of its own is still the network's notice, kept as a system message (it changes nothing).
    const all = await history(k.key, session.id);
    expect(all).toEqual([expect.objectContaining({ type: "system", system: { kind: "unknown", body: "" } })]);
    expect(await countOnShards("SELECT count(*) AS n FROM contacts WHERE account_id = ?", k.accountId)).toBe(0);
    await new Promise((r) => setTimeout(r, 300));
    expect(eventsOf(k.accountId).map((e) => e.type).filter((t) => t !== "message.received" && t !== "session.connected")).toEqual([]);
  });

  it("a number change to a number another contact has: the chat moves, the other contact keeps its number", async () => {
    const k = await createKey("pro");
    const { phone, session } = await whatsappSession(k.key);
    const NEW = "16505557777";
    await api("/api/contacts", { method: "POST", key: k.key, json: { phone: `+${NEW}`, name: "Already here" } });
    await postHook(session.id, webhookWith(phone.phoneNumberId, { contacts: [{ profile: { name: "Sheena" }, wa_id: FROM }], messages: [{ from: FROM, id: "wamid.m1", timestamp: String(now()), type: "text", text: { body: "hi" } }] }));
    const change = webhookWith(phone.phoneNumberId, { messages: [{ from: FROM, id: "wamid.sys", timestamp: String(now()), type: "system", system: { body: "changed", wa_id: NEW, type: "user_changed_number" } }] });
    expect((await postHook(session.id, change)).status).toBe(200);
    const contacts = (await json<{ data: { phone: string; name: string | null }[] }>(await api("/api/contacts", { key: k.key }))).data;
    expect(contacts.map((c) => [c.phone, c.name]).sort()).toEqual([[`+${FROM}`, "Sheena"], [`+${NEW}`, "Already here"]]);
    expect(await countOnShards("SELECT count(*) AS n FROM messages WHERE account_id = ? AND chat_id = ?", k.accountId, `${NEW}@c.us`)).toBe(2);
  });
});
