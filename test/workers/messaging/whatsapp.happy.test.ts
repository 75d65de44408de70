import { describe, expect, it } from "vitest";
import { api, createKey, firstOnShards } from "../helpers.ts";
import { APP_SECRET, openWindows, postHook, statusWebhook, textWebhook, VERIFY, whatsappSession } from "./whatsapp-support.ts";
import { eventsOf, fakeRequests, getMessage, json, waitFor, type MessageJson } from "./support.ts";

describe("messaging: WhatsApp Cloud API driver (against the fake Graph API)", () => {
  it("creating a session checks the credentials on the phone number resource and goes WORKING; secrets never echoed", async () => {
    const k = await createKey("pro");
    const { phone, session } = await whatsappSession(k.key);
    expect(session).toMatchObject({ network: "whatsapp", status: "WORKING", phoneNumber: `+${phone.display}`, credentials: { set: true }, webhookPath: `/hooks/whatsapp/${session.id}` });
    const text = JSON.stringify(session);
    for (const secret of [phone.token, APP_SECRET, VERIFY]) expect(text).not.toContain(secret);
    const reqs = await fakeRequests(phone.phoneNumberId);
    expect(reqs[0]).toMatchObject({ method: "GET", valid: true, authorization: `Bearer ${phone.token}` });
  });

  it("sends text, template and media by link; every request is valid against the reference document", async () => {
    const k = await createKey("pro");
    const { phone, session } = await whatsappSession(k.key);
    await openWindows(session.id, phone.phoneNumberId, ["16505551234"]);
    const text = await api("/api/messages/send", { method: "POST", key: k.key, json: { sessionId: session.id, to: "+16505551234", text: "hello" } });
    expect(text.status).toBe(201);
    const t = await json<MessageJson>(text);
    expect(t.status).toBe("sent");
    const tpl = await api("/api/messages/send", {
      method: "POST",
      key: k.key,
      json: { sessionId: session.id, to: "16505551234@c.us", template: { name: "order_update", language: "en_US", components: [{ type: "body", parameters: [{ type: "text", text: "Ada" }] }] }, replyTo: t.id },
    });
    expect(tpl.status).toBe(201);
    expect((await json<MessageJson>(tpl)).status).toBe("sent");
    const media = await api("/api/messages/send-media", {
      method: "POST",
      key: k.key,
      json: { sessionId: session.id, to: "16505551234", type: "document", media: { url: "https://files.example.com/a.pdf" }, caption: "the file", filename: "a.pdf" },
    });
    expect(media.status).toBe(201);
    expect(await json(media)).toMatchObject({ status: "sent", type: "document", media: { url: "https://files.example.com/a.pdf", caption: "the file" } });
    const image = await api("/api/messages/send-media", {
      method: "POST",
      key: k.key,
      json: { sessionId: session.id, to: "16505551234", type: "image", media: { data: btoa("\x89PNG\r\n\x1a\n fake bytes"), mimetype: "image/png" }, caption: "pic" },
    });
    expect(image.status).toBe(201);
    const reqs = (await fakeRequests(phone.phoneNumberId)).filter((r) => r.method === "POST");
    expect(reqs).toHaveLength(4);
    expect(reqs.every((r) => r.valid)).toBe(true);
    expect(reqs[0]!.body).toMatchObject({ messaging_product: "whatsapp", to: "16505551234", type: "text", text: { body: "hello" } });
    expect(reqs[1]!.body).toMatchObject({ type: "template", template: { name: "order_update", language: { code: "en_US" } }, context: { message_id: expect.stringMatching(/^wamid\./) } });
    expect(reqs[2]!.body).toMatchObject({ type: "document", document: { link: "https://files.example.com/a.pdf", caption: "the file", filename: "a.pdf" } });
    // Uploaded media goes out as a signed, expiring URL of ours that serves the bytes.
    const link = (reqs[3]!.body as { image: { link: string } }).image.link;
    expect(link).toMatch(/\/hooks\/media\/med_[0-9a-z]+\?exp=\d+&sig=/);
    const path = link.slice(link.indexOf("/hooks/"));
    const served = await api(path);
    expect(served.status).toBe(200);
    expect(served.headers.get("content-type")).toBe("image/png");
    expect([...new Uint8Array(await served.arrayBuffer())]).toEqual([..."\x89PNG\r\n\x1a\n fake bytes"].map((ch) => ch.charCodeAt(0)));
    // Replace the signature's first character with one that surely differs from it.
    const tampered = await api(path.replace(/sig=(.)/, (_, first: string) => `sig=${first === "A" ? "B" : "A"}`));
    expect(tampered.status).toBe(404);
  });

  it("inbound webhook: GET answers the challenge only with the verify token", async () => {
    const k = await createKey("pro");
    const { session } = await whatsappSession(k.key);
    const ok = await api(`/hooks/whatsapp/${session.id}?hub.mode=subscribe&hub.verify_token=${VERIFY}&hub.challenge=1158201444`);
    expect(ok.status).toBe(200);
    expect(await ok.text()).toBe("1158201444");
    const bad = await api(`/hooks/whatsapp/${session.id}?hub.mode=subscribe&hub.verify_token=nope&hub.challenge=1`);
    expect(bad.status).toBe(403);
  });

  it("inbound message with a valid signature is stored once (replays ignored) and creates the contact", async () => {
    const k = await createKey("pro");
    const { phone, session } = await whatsappSession(k.key);
    const payload = textWebhook(phone.phoneNumberId, "wamid.HBgLMTY1MDM4Nzk0MzkVAgASGBQzQTRBNjU5OUFFRTAzODEwMTQ0RgA=");
    expect((await postHook(session.id, payload)).status).toBe(200);
    expect((await postHook(session.id, payload)).status).toBe(200);
    const history = await json<{ data: MessageJson[] }>(await api(`/api/messages/16505551234@s.whatsapp.net?sessionId=${session.id}`, { key: k.key }));
    expect(history.data).toHaveLength(1);
    expect(history.data[0]).toMatchObject({ direction: "inbound", text: "Does it come in another color?", chatId: "16505551234@c.us" });
    const contacts = await json<{ data: { name: string; phone: string }[] }>(await api("/api/contacts", { key: k.key }));
    expect(contacts.data).toEqual([expect.objectContaining({ name: "Sheena Nelson", phone: "+16505551234" })]);
    await waitFor(() => eventsOf(k.accountId, "message.received").length === 1 && eventsOf(k.accountId, "contact.created").length === 1, 10_000, "events");
    await new Promise((r) => setTimeout(r, 1200));
    expect(eventsOf(k.accountId, "message.received")).toHaveLength(1);
  });

  it("a bad signature answers 401 and stores nothing", async () => {
    const k = await createKey("pro");
    const { phone, session } = await whatsappSession(k.key);
    const res = await postHook(session.id, textWebhook(phone.phoneNumberId, "wamid.bad1"), "wrong-secret");
    expect(res.status).toBe(401);
    const unsigned = await api(`/hooks/whatsapp/${session.id}`, { method: "POST", body: JSON.stringify(textWebhook(phone.phoneNumberId, "wamid.bad2")), headers: { "Content-Type": "application/json" } });
    expect(unsigned.status).toBe(401);
    const history = await json<{ data: unknown[] }>(await api(`/api/messages/16505551234@c.us`, { key: k.key }));
    expect(history.data).toHaveLength(0);
  });

  it("statuses out of order: read before delivered ends at read, never back; failed after read is ignored", async () => {
    const k = await createKey("pro");
    const { phone, session } = await whatsappSession(k.key);
    await openWindows(session.id, phone.phoneNumberId, ["16505551234"]);
    const m = await json<MessageJson>(await api("/api/messages/send", { method: "POST", key: k.key, json: { sessionId: session.id, to: "16505551234", text: "x" } }));
    const t = Math.floor(Date.now() / 1000);
    expect((await getMessage(k.key, "16505551234@c.us", m.id))?.status).toBe("sent");
    // Meta's statuses name the wamid the fake answered to the send, which we stored.
    const externalId = await externalIdOf(m.id);
    expect((await postHook(session.id, statusWebhook(phone.phoneNumberId, [{ id: externalId, status: "read", timestamp: t + 5 }]))).status).toBe(200);
    expect((await postHook(session.id, statusWebhook(phone.phoneNumberId, [{ id: externalId, status: "delivered", timestamp: t + 2 }]))).status).toBe(200);
    expect((await postHook(session.id, statusWebhook(phone.phoneNumberId, [{ id: externalId, status: "failed", timestamp: t + 6, errors: [{ code: 131026, title: "Message undeliverable" }] }]))).status).toBe(200);
    const final = await getMessage(k.key, "16505551234@c.us", m.id);
    expect(final).toMatchObject({ status: "read" });
    expect(final!.deliveredAt).not.toBeNull();
    const types = await waitFor(() => {
      const list = eventsOf(k.accountId).filter((e) => (e.data as { id?: string }).id === m.id).map((e) => e.type);
      return list.length >= 3 ? list : undefined;
    }, 10_000, "status events");
    expect(types).toEqual(["message.sent", "message.delivered", "message.read"]);
  });

  it("a failed status maps the Graph error code to the failure reason", async () => {
    const k = await createKey("pro");
    const { phone, session } = await whatsappSession(k.key);
    await openWindows(session.id, phone.phoneNumberId, ["16505551234"]);
    const m = await json<MessageJson>(await api("/api/messages/send", { method: "POST", key: k.key, json: { sessionId: session.id, to: "16505551234", text: "x" } }));
    const externalId = await externalIdOf(m.id);
    await postHook(session.id, statusWebhook(phone.phoneNumberId, [{ id: externalId, status: "failed", timestamp: Math.floor(Date.now() / 1000), errors: [{ code: 131047, title: "Re-engagement message" }] }]));
    expect(await getMessage(k.key, "16505551234@c.us", m.id)).toMatchObject({ status: "failed", error: { code: "reengagement_window_closed" } });
  });
});

async function externalIdOf(messageId: string): Promise<string> {
  const row = await firstOnShards<{ external_id: string }>("SELECT external_id FROM messages WHERE id = ?", messageId);
  return row!.external_id;
}
