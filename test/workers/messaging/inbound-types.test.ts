import { beforeAll, describe, expect, it } from "vitest";
import { api, createKey, shardD1, firstOnShards } from "../helpers.ts";
import { eventsOf, json, waitFor, type MessageJson } from "./support.ts";
import { postHook, postHookUnchecked, webhookOf, whatsappSession } from "./whatsapp-support.ts";

const FROM = "16505551234";
const CHAT = `${FROM}@c.us`;
// Recent: the customer's messages keep the 24-hour window open for the reply sent below.
const NOW = Math.floor(Date.now() / 1000);
const base = (id: string) => ({ from: FROM, id: `wamid.${id}`, timestamp: String(NOW) });

/**
 * One real-shaped Cloud API message object per inbound type (the reference document's examples),
 * with what it must be stored as; `offSpec` ones are what Meta does not send today (a type added
 * later, a broken or oversized body), posted without the fake's webhook check.
 */
const CASES: { name: string; object: Record<string, unknown>; expected: Record<string, unknown>; offSpec?: true }[] = [
  { name: "text", object: { ...base("t1"), type: "text", text: { body: "Does it come in another color?" } }, expected: { type: "text", text: "Does it come in another color?" } },
  {
    name: "image",
    object: { ...base("i1"), type: "image", image: { caption: "Taj Mahal", mime_type: "image/jpeg", sha256: "SfInY0gGKTsJlUWbwxC1k+FAD0FZHvzwfpvO0zX0GUI=", id: "1003383421387256" } },
    expected: { type: "image", media: { mimetype: "image/jpeg", caption: "Taj Mahal" } },
  },
  { name: "video", object: { ...base("v1"), type: "video", video: { caption: "My vacation video", mime_type: "video/mp4", sha256: "abc=", id: "1003383421387257" } }, expected: { type: "video", media: { mimetype: "video/mp4", caption: "My vacation video" } } },
  { name: "audio (voice note)", object: { ...base("a1"), type: "audio", audio: { mime_type: "audio/ogg; codecs=opus", sha256: "abc=", id: "1003383421387258", voice: true } }, expected: { type: "audio", media: { mimetype: "audio/ogg; codecs=opus", voice: true } } },
  { name: "document", object: { ...base("d1"), type: "document", document: { filename: "receipt.pdf", mime_type: "application/pdf", sha256: "abc=", id: "1003383421387259" } }, expected: { type: "document", media: { filename: "receipt.pdf", mimetype: "application/pdf" } } },
  { name: "sticker", object: { ...base("s1"), type: "sticker", sticker: { mime_type: "image/webp", sha256: "abc=", id: "1003383421387260", animated: true } }, expected: { type: "sticker", media: { mimetype: "image/webp", animated: true } } },
  {
    name: "location",
    object: { ...base("l1"), type: "location", location: { address: "101 Forest Ave, Palo Alto, CA 94301", latitude: 37.44221496582, longitude: -122.16165924072, name: "Philz Coffee", url: "https://philzcoffee.com/" } },
    expected: { type: "location", location: { latitude: 37.44221496582, longitude: -122.16165924072, name: "Philz Coffee", address: "101 Forest Ave, Palo Alto, CA 94301", url: "https://philzcoffee.com/" } },
  },
  {
    name: "contacts",
    object: { ...base("c1"), type: "contacts", contacts: [{ name: { first_name: "Lucía", last_name: "Gómez", formatted_name: "Lucía Gómez" }, org: { company: "Google" }, phones: [{ phone: "+1 (983) 555-2319", wa_id: "19835552319", type: "MOBILE" }] }] },
    expected: { type: "contacts", contacts: [{ name: { formattedName: "Lucía Gómez", firstName: "Lucía", lastName: "Gómez" }, org: { company: "Google" }, phones: [{ phone: "+1 (983) 555-2319", waId: "19835552319" }] }] },
  },
  {
    name: "interactive (list reply)",
    object: { ...base("n1"), type: "interactive", context: { from: "15550783881", id: "wamid.unknown-list" }, interactive: { type: "list_reply", list_reply: { id: "priority_express", title: "Priority Mail Express", description: "Next Day to 2 Days" } } },
    expected: { type: "interactive", interactive: { type: "list_reply", id: "priority_express", title: "Priority Mail Express", description: "Next Day to 2 Days" } },
  },
  {
    name: "interactive (button reply)",
    object: { ...base("n2"), type: "interactive", context: { from: "15550783881", id: "wamid.unknown-btn" }, interactive: { type: "button_reply", button_reply: { id: "cancel-button", title: "Cancel" } } },
    expected: { type: "interactive", interactive: { type: "button_reply", id: "cancel-button", title: "Cancel" } },
  },
  {
    name: "button (template quick reply)",
    object: { ...base("b1"), type: "button", context: { from: "15550783881", id: "wamid.tpl" }, button: { payload: "Unsubscribe", text: "Unsubscribe" } },
    expected: { type: "button", button: { payload: "Unsubscribe", text: "Unsubscribe" } },
  },
  {
    name: "order",
    object: { ...base("o1"), type: "order", order: { catalog_id: "194836987003835", text: "", product_items: [{ product_retailer_id: "di9ozbzfi4", quantity: 2, item_price: 30, currency: "USD" }] } },
    expected: { type: "order", order: { catalogId: "194836987003835", text: "", items: [{ productRetailerId: "di9ozbzfi4", quantity: 2, itemPrice: 30, currency: "USD" }] } },
  },
  {
    name: "unsupported",
    object: { ...base("u1"), type: "unsupported", errors: [{ code: 131051, title: "Message type unknown", message: "Message type unknown", error_data: { details: "Message type is currently not supported." } }] },
    expected: { type: "unsupported", unsupported: { originalType: "unsupported", errors: [{ code: 131051, title: "Message type unknown" }], raw: expect.objectContaining({ type: "unsupported" }) } },
  },
  {
    name: "a type added later (kept raw)",
    offSpec: true,
    object: { ...base("f1"), type: "hologram", hologram: { id: "42", frames: 3 } },
    expected: { type: "unsupported", unsupported: { originalType: "hologram", raw: expect.objectContaining({ hologram: { id: "42", frames: 3 } }) } },
  },
  {
    name: "a known type missing its body (kept raw)",
    offSpec: true,
    object: { ...base("x1"), type: "location", location: { name: "no coordinates" } },
    expected: { type: "unsupported", unsupported: { originalType: "location", raw: expect.objectContaining({ location: { name: "no coordinates" } }) } },
  },
  {
    name: "contact cards too big as a whole (kept as unsupported, raw dropped)",
    offSpec: true,
    object: { ...base("x3"), type: "contacts", contacts: Array.from({ length: 10 }, (_, i) => ({ name: { formatted_name: `C${i}` }, urls: Array.from({ length: 10 }, () => ({ url: `https://example.com/${"u".repeat(1000)}` })) })) },
    expected: { type: "unsupported", unsupported: { originalType: "contacts", raw: null } },
  },
  {
    name: "unsupported, too big to keep raw",
    offSpec: true,
    object: { ...base("x2"), type: "hologram", hologram: { blob: "x".repeat(9000) } },
    expected: { type: "unsupported", unsupported: { originalType: "hologram", raw: null } },
  },
];

describe("messaging: every inbound Cloud API message type is stored and announced", () => {
  let key: string;
  let accountId: string;
  let sessionId: string;
  let phoneNumberId: string;
  let stored: Map<string, MessageJson>;

  beforeAll(async () => {
    const k = await createKey("pro");
    key = k.key;
    accountId = k.accountId;
    const s = await whatsappSession(key);
    sessionId = s.session.id;
    phoneNumberId = s.phone.phoneNumberId;
    expect((await postHook(sessionId, webhookOf(phoneNumberId, CASES.filter((c) => !c.offSpec).map((c) => c.object)))).status).toBe(200);
    expect((await postHookUnchecked(sessionId, webhookOf(phoneNumberId, CASES.filter((c) => c.offSpec).map((c) => c.object)))).status).toBe(200);
    const page = await json<{ data: MessageJson[] }>(await api(`/api/messages/${CHAT}?limit=100&sessionId=${sessionId}`, { key }));
    const rows = await (await shardD1(accountId)).prepare("SELECT id, external_id FROM messages WHERE session_id = ?").bind(sessionId).all<{ id: string; external_id: string }>();
    const byId = new Map(page.data.map((m) => [m.id, m]));
    stored = new Map(rows.results.map((r) => [r.external_id, byId.get(r.id)!]));
  });

  it.each(CASES)("$name", async ({ object, expected }) => {
    const m = stored.get(object.id as string);
    expect(m).toMatchObject({ direction: "inbound", status: "received", chatId: CHAT, ...expected });
    const event = await waitFor(() => eventsOf(accountId, "message.received").find((e) => (e.data as { id: string }).id === m!.id), 10_000, "message.received");
    expect(event.data).toMatchObject(expected);
  });

  it("the media of the file types are settled (their ids are unknown to the network: failed with the reason)", async () => {
    const settled = await waitFor(async () => {
      const page = await json<{ data: MessageJson[] }>(await api(`/api/messages/${CHAT}?limit=100&sessionId=${sessionId}`, { key }));
      const files = page.data.filter((m) => m.media);
      // all five present (an empty list settles nothing)
      return files.length === 5 && files.every((m) => (m.media as { status: string }).status === "failed") ? files : undefined;
    }, 20_000, "media failed");
    expect(settled).toHaveLength(5);
  });

  it("a reaction is stored and lands on the message it reacts to; an empty emoji removes it", async () => {
    const res = await api("/api/messages/send", { method: "POST", key, json: { sessionId, to: `+${FROM}`, text: "our offer" } });
    expect(res.status).toBe(201);
    const sent = await json<MessageJson>(res);
    const wamid = (await firstOnShards<{ external_id: string }>("SELECT external_id FROM messages WHERE id = ?", sent.id))!.external_id;
    await postHook(sessionId, webhookOf(phoneNumberId, [{ ...base("r1"), timestamp: String(NOW + 1), type: "reaction", reaction: { message_id: wamid, emoji: "👍" } }]));
    const history = async () => (await json<{ data: MessageJson[] }>(await api(`/api/messages/${CHAT}?limit=100&sessionId=${sessionId}`, { key }))).data;
    let all = await history();
    expect(all.find((m) => m.id === sent.id)).toMatchObject({ reactions: [{ from: CHAT, emoji: "👍" }] });
    expect(all.find((m) => m.type === "reaction")).toMatchObject({ reaction: { messageId: sent.id, emoji: "👍" } });
    await postHook(sessionId, webhookOf(phoneNumberId, [{ ...base("r2"), timestamp: String(NOW + 2), type: "reaction", reaction: { message_id: wamid, emoji: "" } }]));
    all = await history();
    expect(all.find((m) => m.id === sent.id)!.reactions).toBeUndefined();
    // A replay of the first reaction is a duplicate: it does not put the removed reaction back.
    await postHook(sessionId, webhookOf(phoneNumberId, [{ ...base("r1"), timestamp: String(NOW + 1), type: "reaction", reaction: { message_id: wamid, emoji: "👍" } }]));
    expect((await history()).find((m) => m.id === sent.id)!.reactions).toBeUndefined();
  });
});
