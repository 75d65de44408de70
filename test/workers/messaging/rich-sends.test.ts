import { describe, expect, it } from "vitest";
import { api, createKey, allShardD1s } from "../helpers.ts";
import { fakeRequests, json, sandboxSession, waitFor, type MessageJson } from "./support.ts";
import { postHook, webhookOf, whatsappSession } from "./whatsapp-support.ts";
import { action, createCampaign, importContacts, uniquePhone, watch } from "../campaigns/support.ts";

const LOCATION = { latitude: 37.44221496582, longitude: -122.16165924072, name: "Philz Coffee", address: "101 Forest Ave, Palo Alto, CA 94301" };
const CONTACTS = [{ name: { formattedName: "Lucía Gómez", firstName: "Lucía", lastName: "Gómez" }, phones: [{ phone: "+19835552319", waId: "19835552319", type: "WORK" }], emails: [{ email: "lucia@example.com" }], org: { company: "Google" } }];
const BUTTONS = { type: "button", header: "Your order", body: "Shall we ship it?", footer: "Reply below", buttons: [{ id: "yes", title: "Ship it" }, { id: "no", title: "Not yet" }] };
const LIST = { type: "list", body: "Pick a delivery", button: "Options", sections: [{ title: "Fast", rows: [{ id: "express", title: "Express", description: "Next day" }] }, { title: "Cheap", rows: [{ id: "slow", title: "Standard" }] }] };

/** Each outbound type, as the API takes it and as it is stored. */
const SENDS: { name: string; body: Record<string, unknown>; stored: Record<string, unknown> }[] = [
  { name: "location", body: { location: LOCATION }, stored: { type: "location", location: LOCATION } },
  { name: "contacts", body: { contacts: CONTACTS }, stored: { type: "contacts", contacts: CONTACTS } },
  { name: "reply buttons", body: { interactive: BUTTONS }, stored: { type: "interactive", interactive: BUTTONS } },
  { name: "list", body: { interactive: LIST }, stored: { type: "interactive", interactive: LIST } },
];

const send = (key: string, body: Record<string, unknown>) => api("/api/messages/send", { method: "POST", key, json: body });

describe("messaging: richer sends", () => {
  it("whatsapp: location, contacts, buttons, list, sticker and reaction go out as valid Cloud API requests", async () => {
    const k = await createKey("pro");
    const { phone, session } = await whatsappSession(k.key);
    // The customer writes first: the 24-hour window is open, and there is a message to react to.
    await postHook(session.id, webhookOf(phone.phoneNumberId, [{ from: "16505551234", id: "wamid.hello", timestamp: String(Math.floor(Date.now() / 1000)), type: "text", text: { body: "hi" } }]));
    const hello = (await json<{ data: MessageJson[] }>(await api(`/api/messages/16505551234@c.us?sessionId=${session.id}`, { key: k.key }))).data[0]!;
    for (const c of SENDS) {
      const res = await send(k.key, { sessionId: session.id, to: "+16505551234", ...c.body });
      expect(res.status, c.name).toBe(201);
      expect(await json(res), c.name).toMatchObject({ status: "sent", direction: "outbound", ...c.stored });
    }
    const sticker = await api("/api/messages/send-media", { method: "POST", key: k.key, json: { sessionId: session.id, to: "+16505551234", type: "sticker", media: { url: "https://files.example.com/s.webp" } } });
    expect(sticker.status).toBe(201);
    const reaction = await send(k.key, { sessionId: session.id, to: "+16505551234", reaction: { messageId: hello.id, emoji: "❤️" } });
    expect(reaction.status).toBe(201);
    expect(await json(reaction)).toMatchObject({ type: "reaction", reaction: { messageId: hello.id, emoji: "❤️" } });
    const history = (await json<{ data: MessageJson[] }>(await api(`/api/messages/16505551234@c.us?sessionId=${session.id}`, { key: k.key }))).data;
    expect(history.find((m) => m.id === hello.id)).toMatchObject({ reactions: [{ from: "me", emoji: "❤️" }] });

    const posts = (await fakeRequests(phone.phoneNumberId)).filter((r) => r.method === "POST");
    expect(posts).toHaveLength(6);
    expect(posts.filter((r) => !r.valid).map((r) => r.errors)).toEqual([]);
    expect(posts.map((r) => r.body!.type)).toEqual(["location", "contacts", "interactive", "interactive", "sticker", "reaction"]);
    expect(posts[0]!.body).toMatchObject({ location: { latitude: "37.44221496582", longitude: "-122.16165924072", name: "Philz Coffee" } });
    expect(posts[1]!.body).toMatchObject({ contacts: [{ name: { formatted_name: "Lucía Gómez" }, phones: [{ phone: "+19835552319", wa_id: "19835552319", type: "WORK" }] }] });
    expect(posts[2]!.body).toMatchObject({ interactive: { type: "button", header: { type: "text", text: "Your order" }, action: { buttons: [{ type: "reply", reply: { id: "yes", title: "Ship it" } }, { type: "reply", reply: { id: "no" } }] } } });
    expect(posts[3]!.body).toMatchObject({ interactive: { type: "list", action: { button: "Options", sections: [{ title: "Fast", rows: [{ id: "express" }] }, { title: "Cheap" }] } } });
    expect(posts[4]!.body).toMatchObject({ sticker: { link: "https://files.example.com/s.webp" } });
    expect(posts[5]!.body).toMatchObject({ reaction: { message_id: "wamid.hello", emoji: "❤️" } });
  });

  it("validated at the edge: >3 buttons, >10 rows in a section, >5 contacts, a sticker caption, a reaction to a message of another chat", async () => {
    const k = await createKey("pro");
    const s = await sandboxSession(k.key);
    const other = await json<MessageJson>(await send(k.key, { sessionId: s.id, to: "+15550004444", text: "elsewhere" }));
    const bad: Record<string, unknown>[] = [
      { interactive: { ...BUTTONS, buttons: [1, 2, 3, 4].map((i) => ({ id: `b${i}`, title: `B${i}` })) } },
      { interactive: { ...BUTTONS, buttons: [{ id: "a", title: "x".repeat(21) }] } },
      { interactive: { ...LIST, sections: [{ title: "Many", rows: Array.from({ length: 11 }, (_, i) => ({ id: `r${i}`, title: `Row ${i}` })) }] } },
      { contacts: Array.from({ length: 6 }, () => CONTACTS[0]) },
      { location: { latitude: 91, longitude: 0 } },
      { reaction: { messageId: other.id, emoji: "👍" } },
      { text: "x", location: LOCATION },
    ];
    for (const body of bad) {
      const res = await send(k.key, { sessionId: s.id, to: "+15550001111", ...body });
      expect(res.status, JSON.stringify(body).slice(0, 80)).toBe(400);
      expect(await json(res)).toMatchObject({ error: { code: "invalid_request" } });
    }
    const sticker = await api("/api/messages/send-media", { method: "POST", key: k.key, json: { sessionId: s.id, to: "+15550001111", type: "sticker", media: { url: "https://files.example.com/s.webp" }, caption: "no" } });
    expect(sticker.status).toBe(400);
  });

  it("bulk: location, contacts and interactive items are queued; a reaction item is rejected by index", async () => {
    const k = await createKey("pro");
    const s = await sandboxSession(k.key);
    const res = await api("/api/messages/send-bulk", {
      method: "POST",
      key: k.key,
      json: { sessionId: s.id, messages: [{ to: "+15550001111", location: LOCATION }, { to: "+15550001112", contacts: CONTACTS }, { to: "+15550001113", interactive: LIST }, { to: "+15550001114", reaction: { messageId: "msg_x", emoji: "👍" } }] },
    });
    expect(res.status).toBe(202);
    const body = await json<{ batchId: string; accepted: number; rejected: { index: number }[] }>(res);
    expect(body).toMatchObject({ accepted: 3, rejected: [{ index: 3 }] });
    await waitFor(async () => (await json<{ done: boolean }>(await api(`/api/messages/batches/${body.batchId}`, { key: k.key }))).done, 10_000, "batch done");
    const m = (await json<{ data: MessageJson[] }>(await api(`/api/messages/15550001113@c.us?sessionId=${s.id}`, { key: k.key }))).data[0];
    expect(m).toMatchObject({ type: "interactive", interactive: LIST, status: expect.stringMatching(/sent|delivered|read/) });
  });

  it("sandbox: every outbound type arrives at a peer session; the peer's reaction lands on the sender's message", async () => {
    const k = await createKey("pro");
    const a = await sandboxSession(k.key);
    const b = await sandboxSession(k.key);
    const to = b.phoneNumber!;
    const aChat = `${a.phoneNumber!.slice(1)}@c.us`;
    for (const c of SENDS) expect((await send(k.key, { sessionId: a.id, to, ...c.body })).status).toBe(201);
    const first = await json<MessageJson>(await send(k.key, { sessionId: a.id, to, text: "react to me" }));
    const atB = async () => (await json<{ data: MessageJson[] }>(await api(`/api/messages/${aChat}?sessionId=${b.id}&limit=100`, { key: k.key }))).data;
    const received = await waitFor(async () => {
      const list = await atB();
      return list.length >= SENDS.length + 1 ? list : undefined;
    }, 10_000, "peer messages");
    for (const c of SENDS) expect(received.find((m) => m.type === c.stored.type && JSON.stringify(m).includes(JSON.stringify(Object.values(c.body)[0]).slice(1, 30))), c.name).toMatchObject({ direction: "inbound", ...c.stored });
    const copy = received.find((m) => m.text === "react to me")!;
    expect((await send(k.key, { sessionId: b.id, to: a.phoneNumber!, reaction: { messageId: copy.id, emoji: "🎉" } })).status).toBe(201);
    const reacted = await waitFor(async () => {
      const list = (await json<{ data: MessageJson[] }>(await api(`/api/messages/${to.slice(1)}@c.us?sessionId=${a.id}&limit=100`, { key: k.key }))).data;
      return list.find((m) => m.id === first.id && m.reactions);
    }, 10_000, "reaction at the sender");
    expect(reacted.reactions).toEqual([{ from: `${to.slice(1)}@c.us`, emoji: "🎉" }]);
  });

  it("whatsapp: a free-form send into a closed 24-hour window is 409 before reaching Meta; templates go; queued ones fail with the reason", async () => {
    const k = await createKey("pro");
    const { phone, session } = await whatsappSession(k.key);
    const posts = async () => (await fakeRequests(phone.phoneNumberId)).filter((r) => r.method === "POST").length;
    // Never wrote, and wrote 25 hours ago: both closed.
    await postHook(session.id, webhookOf(phone.phoneNumberId, [{ from: "16505550000", id: "wamid.old-1", timestamp: String(Math.floor(Date.now() / 1000) - 25 * 3600), type: "text", text: { body: "long ago" } }]));
    for (const to of ["+16505551234", "+16505550000"]) {
      for (const body of [{ text: "hi" }, { location: LOCATION }, { interactive: BUTTONS }]) {
        const res = await send(k.key, { sessionId: session.id, to, ...body });
        expect(res.status).toBe(409);
        expect(await json(res)).toMatchObject({ error: { code: "reengagement_window_closed" } });
      }
    }
    expect(await posts()).toBe(0);
    const tpl = await send(k.key, { sessionId: session.id, to: "+16505551234", template: { name: "hello_world", language: "en_US" } });
    expect(tpl.status).toBe(201);
    expect(await posts()).toBe(1);
    const { env } = await import("cloudflare:workers");
    for (const d1 of allShardD1s()) await d1.prepare("UPDATE messaging_sessions SET send_rate_per_minute = NULL WHERE id = ?").bind(session.id).run();
    const bulk = await json<{ batchId: string }>(await api("/api/messages/send-bulk", { method: "POST", key: k.key, json: { sessionId: session.id, messages: [{ to: "+16505551234", text: "a" }, { to: "+16505551234", template: { name: "hello_world", language: "en_US" } }] } }));
    const done = await waitFor(async () => {
      const b = await json<{ done: boolean; failed: number; sent: number }>(await api(`/api/messages/batches/${bulk.batchId}`, { key: k.key }));
      return b.done ? b : undefined;
    }, 10_000, "batch");
    expect(done).toMatchObject({ failed: 1, sent: 1 });
    const failed = (await json<{ data: MessageJson[] }>(await api(`/api/messages/16505551234@c.us?sessionId=${session.id}`, { key: k.key }))).data.find((m) => m.status === "failed");
    expect(failed).toMatchObject({ text: "a", error: { code: "reengagement_window_closed" } });
    expect(await posts()).toBe(2);
  });

  it("campaigns: a list message goes to every recipient with its typed body", async () => {
    const k = await createKey("pro");
    const s = await sandboxSession(k.key);
    const phones = [uniquePhone(), uniquePhone()];
    await importContacts(k.key, phones.map((phone) => ({ phone, tags: ["rich"] })));
    const c = await createCampaign(k.key, { sessionId: s.id, message: { interactive: LIST }, audience: { tags: ["rich"] } });
    expect((await action(k.key, c.id, "start")).status).toBe(200);
    await watch(k.key, c.id, (x) => x.status === "completed");
    for (const phone of phones) {
      const m = (await json<{ data: MessageJson[] }>(await api(`/api/messages/${phone.slice(1)}@c.us?sessionId=${s.id}`, { key: k.key }))).data[0];
      expect(m).toMatchObject({ type: "interactive", interactive: LIST, campaignId: c.id });
    }
    const bad = await api("/api/campaigns", { method: "POST", key: k.key, json: { sessionId: s.id, message: { interactive: { ...BUTTONS, buttons: [] } }, audience: { all: true } } });
    expect(bad.status).toBe(400);
  });
});
