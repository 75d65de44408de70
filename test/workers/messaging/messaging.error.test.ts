import { describe, expect, it } from "vitest";
import { api, createKey, errorOf } from "../helpers.ts";
import { json, sandboxSession, type MessageJson } from "./support.ts";

describe("messaging: bad input", () => {
  it("send: unknown session 404, bad `to` 400 naming the accepted forms, unknown field 400, neither text nor template 400", async () => {
    const k = await createKey("pro");
    const s = await sandboxSession(k.key);
    const unknown = await api("/api/messages/send", { method: "POST", key: k.key, json: { sessionId: "ses_nope", to: "+14155550123", text: "x" } });
    expect(unknown.status).toBe(404);
    const badTo = await api("/api/messages/send", { method: "POST", key: k.key, json: { sessionId: s.id, to: "12ab", text: "x" } });
    expect(badTo.status).toBe(400);
    const e = await errorOf(badTo);
    expect(e.code).toBe("invalid_request");
    expect(e.message).toMatch(/E\.164.*@c\.us.*@s\.whatsapp\.net/);
    const extra = await api("/api/messages/send", { method: "POST", key: k.key, json: { sessionId: s.id, to: "+14155550123", text: "x", foo: 1 } });
    expect(extra.status).toBe(400);
    const none = await api("/api/messages/send", { method: "POST", key: k.key, json: { sessionId: s.id, to: "+14155550123" } });
    expect(none.status).toBe(400);
    const badReply = await api("/api/messages/send", { method: "POST", key: k.key, json: { sessionId: s.id, to: "+14155550123", text: "x", replyTo: "msg_nope" } });
    expect(badReply.status).toBe(400);
  });

  it("media: wrong mimetype 400, over the type's size 413, private URL 400, caption on audio 400", async () => {
    const k = await createKey("pro");
    const s = await sandboxSession(k.key);
    const base = { sessionId: s.id, to: "+14155550123" };
    const mime = await api("/api/messages/send-media", { method: "POST", key: k.key, json: { ...base, type: "image", media: { data: btoa("GIF89a"), mimetype: "image/gif" } } });
    expect(mime.status).toBe(400);
    const big = "A".repeat(Math.ceil(((5 * 1024 * 1024 + 10) * 4) / 3 / 4) * 4);
    const tooBig = await api("/api/messages/send-media", { method: "POST", key: k.key, json: { ...base, type: "image", media: { data: big, mimetype: "image/png" } } });
    expect(tooBig.status).toBe(413);
    expect((await errorOf(tooBig)).code).toBe("media_too_large");
    const priv = await api("/api/messages/send-media", { method: "POST", key: k.key, json: { ...base, type: "image", media: { url: "https://169.254.169.254/latest" } } });
    expect(priv.status).toBe(400);
    const audio = await api("/api/messages/send-media", { method: "POST", key: k.key, json: { ...base, type: "audio", media: { url: "https://example.com/a.ogg" }, caption: "no" } });
    expect(audio.status).toBe(400);
    const ok = await api("/api/messages/send-media", { method: "POST", key: k.key, json: { ...base, type: "audio", media: { data: btoa("OggS"), mimetype: "audio/ogg" } } });
    expect(ok.status).toBe(201);
    expect(await json(ok)).toMatchObject({ type: "audio", status: "sent", media: { url: null, mimetype: "audio/ogg", size: 4 } });
  });

  it("bulk: over the maximum 400; session not WORKING 409", async () => {
    const k = await createKey("pro");
    const s = await sandboxSession(k.key);
    const tooMany = await api("/api/messages/send-bulk", { method: "POST", key: k.key, json: { sessionId: s.id, messages: Array.from({ length: 1001 }, () => ({ to: "+14155550123", text: "x" })) } });
    expect(tooMany.status).toBe(400);
    await api(`/api/sessions/${s.id}`, { method: "DELETE", key: k.key });
    const stopped = await api("/api/messages/send-bulk", { method: "POST", key: k.key, json: { sessionId: s.id, messages: [{ to: "+14155550123", text: "x" }] } });
    expect(stopped.status).toBe(409);
  });

  it("sessions: whatsapp without credentials 400; sandbox inbound on a whatsapp session 404; bad chat id 400", async () => {
    const k = await createKey("pro");
    const res = await api("/api/sessions", { method: "POST", key: k.key, json: { network: "whatsapp" } });
    expect(res.status).toBe(400);
    expect(((await errorOf(res)).details as { issues: { path: string }[] }).issues[0]!.path).toBe("whatsapp");
    const bad = await api("/api/messages/not-a-chat", { key: k.key });
    expect(bad.status).toBe(400);
  });

  it("Idempotency-Key: a retried send never sends twice", async () => {
    const k = await createKey("pro");
    const s = await sandboxSession(k.key);
    const send = () => api("/api/messages/send", { method: "POST", key: k.key, headers: { "Idempotency-Key": "send-1" }, json: { sessionId: s.id, to: "+14155550444", text: "once" } });
    const a = await json<MessageJson>(await send());
    const second = await send();
    expect(second.headers.get("Idempotent-Replayed")).toBe("true");
    expect((await json<MessageJson>(second)).id).toBe(a.id);
    const history = await json<{ data: unknown[] }>(await api(`/api/messages/14155550444@c.us`, { key: k.key }));
    expect(history.data).toHaveLength(1);
  });
});
