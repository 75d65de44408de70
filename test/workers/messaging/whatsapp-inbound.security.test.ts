import { describe, expect, it } from "vitest";
import { api, countOnShards, createKey } from "../helpers.ts";
import { json } from "./support.ts";
import { postHook, postHookUnchecked, webhookWith, whatsappSession } from "./whatsapp-support.ts";

/** BSUIDs and number changes never reach across accounts; ids that are not BSUIDs resolve nothing. */
const FROM = "16505551234";
const USER = "US.31311208655302741918";
const now = () => Math.floor(Date.now() / 1000);
const contactsOf = async (key: string) => (await json<{ data: { phone: string; identity: unknown }[] }>(await api("/api/contacts", { key }))).data;

describe("WhatsApp webhook: identity is scoped to the account", () => {
  it("a BSUID known to another account's contact resolves nothing here; a number change here moves nothing there", async () => {
    const a = await createKey("pro");
    const b = await createKey("pro");
    const sa = await whatsappSession(a.key);
    const sb = await whatsappSession(b.key);
    // Account A knows the person by number and BSUID.
    await postHook(sa.session.id, webhookWith(sa.phone.phoneNumberId, { contacts: [{ profile: { name: "Sheena" }, wa_id: FROM, user_id: USER }], messages: [{ from: FROM, from_user_id: USER, id: "wamid.a1", timestamp: String(now()), type: "text", text: { body: "hi A" } }] }));
    // B gets the same BSUID without a number: B has no such contact, so it is a BSUID-only person of B's own (A's number is not used, A's rows not touched).
    const onlyUser = webhookWith(sb.phone.phoneNumberId, { contacts: [{ profile: { name: "Sheena" }, user_id: USER }], messages: [{ from_user_id: USER, id: "wamid.b1", timestamp: String(now()), type: "text", text: { body: "hi B" } }] });
    expect((await postHook(sb.session.id, onlyUser)).status).toBe(200);
    expect(await countOnShards("SELECT count(*) AS n FROM messages WHERE account_id = ? AND chat_id = ?", b.accountId, `${USER}@bsuid`)).toBe(1);
    expect(await contactsOf(b.key)).toEqual([expect.objectContaining({ phone: null, identity: { userId: USER } })]);
    expect(await countOnShards("SELECT count(*) AS n FROM messages WHERE account_id = ?", a.accountId)).toBe(1);
    // B is told the person changed number (by BSUID only): B's contact and chat move; A's contact and chat stay where they are.
    const change = webhookWith(sb.phone.phoneNumberId, { messages: [{ from_user_id: USER, id: "wamid.bsys", timestamp: String(now()), type: "system", system: { body: "changed", wa_id: "16505550001", type: "user_changed_number", previous_user_id: USER } }] });
    expect((await postHook(sb.session.id, change)).status).toBe(200);
    expect(await contactsOf(a.key)).toEqual([expect.objectContaining({ phone: `+${FROM}`, identity: expect.objectContaining({ userId: USER }) })]);
    expect(await countOnShards("SELECT count(*) AS n FROM messages WHERE account_id = ? AND chat_id = ?", a.accountId, `${FROM}@c.us`)).toBe(1);
    expect(await contactsOf(b.key)).toEqual([expect.objectContaining({ phone: "+16505550001" })]);
    expect(await countOnShards("SELECT count(*) AS n FROM messages WHERE account_id = ? AND chat_id = ?", b.accountId, "16505550001@c.us")).toBe(2);
  });

  it("ids that are not BSUIDs (SQL, JSON paths, oversized) resolve nothing and are not stored as identities", async () => {
    const k = await createKey("pro");
    const { phone, session } = await whatsappSession(k.key);
    await postHook(session.id, webhookWith(phone.phoneNumberId, { contacts: [{ profile: { name: "Sheena" }, wa_id: FROM, user_id: USER }], messages: [{ from: FROM, id: "wamid.1", timestamp: String(now()), type: "text", text: { body: "hi" } }] }));
    for (const bad of ["US.1' OR '1'='1", "$.userId", `US.${"9".repeat(500)}`, "us.123", "%"]) {
      const res = await postHookUnchecked(session.id, webhookWith(phone.phoneNumberId, { contacts: [{ profile: { name: "x" }, user_id: bad }], messages: [{ from_user_id: bad, id: `wamid.${bad.length}${bad.charCodeAt(0)}`, timestamp: String(now()), type: "text", text: { body: "x" } }] }));
      expect(res.status).toBe(200);
    }
    expect(await countOnShards("SELECT count(*) AS n FROM messages WHERE account_id = ?", k.accountId)).toBe(1);
    expect(await contactsOf(k.key)).toEqual([expect.objectContaining({ identity: { userId: USER } })]);
  });

  it("a BSUID-only person's chat is the account's own: another account can neither read it, send to it nor mark it read", async () => {
    const a = await createKey("pro");
    const b = await createKey("pro");
    const sa = await whatsappSession(a.key);
    const sb = await whatsappSession(b.key);
    const CHAT = `${USER}@bsuid`;
    await postHook(sa.session.id, webhookWith(sa.phone.phoneNumberId, { contacts: [{ profile: { name: "Anon", username: "@anon" }, user_id: USER }], messages: [{ from_user_id: USER, id: "wamid.x1", timestamp: String(now()), type: "text", text: { body: "secret" } }] }));
    expect(await countOnShards("SELECT count(*) AS n FROM messages WHERE account_id = ? AND chat_id = ?", a.accountId, CHAT)).toBe(1);
    // B names A's session: not found. B's own session: an empty history, no chat to mark read, no contact to send to.
    expect((await api(`/api/messages/${CHAT}?sessionId=${sa.session.id}`, { key: b.key })).status).toBe(404);
    expect((await json<{ data: unknown[] }>(await api(`/api/messages/${CHAT}?sessionId=${sb.session.id}`, { key: b.key }))).data).toEqual([]);
    expect((await json<{ data: unknown[] }>(await api(`/api/messages/${CHAT}`, { key: b.key }))).data).toEqual([]);
    expect((await api(`/api/chats/${CHAT}/read`, { method: "POST", key: b.key, json: { sessionId: sb.session.id } })).status).toBe(404);
    for (const to of [USER, CHAT]) expect((await api("/api/messages/send", { method: "POST", key: b.key, json: { sessionId: sb.session.id, to, text: "x" } })).status).toBe(400);
    expect((await api("/api/messages/send-bulk", { method: "POST", key: b.key, json: { sessionId: sb.session.id, messages: [{ to: USER, text: "x" }] } })).status).toBe(400);
    // Nor can a contact be made up under a BSUID through the API (only the network names BSUID-only people).
    expect((await api("/api/contacts", { method: "POST", key: b.key, json: { phone: USER } })).status).toBe(400);
    expect((await api("/api/contacts", { method: "POST", key: b.key, json: { phone: CHAT } })).status).toBe(400);
    expect(await contactsOf(b.key)).toEqual([]);
    expect(await countOnShards("SELECT count(*) AS n FROM messages WHERE account_id = ?", b.accountId)).toBe(0);
  });
});
