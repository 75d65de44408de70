import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { FetchOutcome } from "../../../src/messaging/media/inbound.ts";
import { api, createKey, shardD1 } from "../helpers.ts";
import { receivedAt, registerWebhook } from "../webhooks/support.ts";
import { downloadMedia, eventsOf, fakeMedia, fakeMediaDownloads, graphUrl, json, sandboxSession, toBase64, waitFor, type MessageJson } from "./support.ts";
import { postHook, webhookOf, whatsappSession } from "./whatsapp-support.ts";

const bytesOf = (n: number, seed = 7) => Uint8Array.from({ length: n }, (_, i) => (i * seed + 3) % 256);
/** n bytes starting with a type's magic number (served as that type only when the bytes are it). */
const fileOf = (magic: number[], n: number, seed = 7) => {
  const b = bytesOf(n, seed);
  b.set(magic);
  return b;
};
const JPEG = [0xff, 0xd8, 0xff, 0xe0];
const OGG = [0x4f, 0x67, 0x67, 0x53];

async function messageById(key: string, chatId: string, sessionId: string, pick: (m: MessageJson) => boolean): Promise<MessageJson | undefined> {
  const page = await json<{ data: MessageJson[] }>(await api(`/api/messages/${chatId}?sessionId=${sessionId}&limit=100`, { key }));
  return page.data.find(pick);
}

const download = downloadMedia;

const mediaState = (m: MessageJson | undefined) => (m?.media as { status?: string } | undefined)?.status;

describe("messaging: inbound media is fetched into storage at once", () => {
  it("whatsapp: media id -> URL -> bytes with the session's token; a failed download is retried; served by a signed URL", async () => {
    const k = await createKey("pro");
    const { phone, session } = await whatsappSession(k.key);
    const bytes = fileOf(JPEG, 20_000);
    const mediaId = await fakeMedia(phone.phoneNumberId, bytes, "image/jpeg", { failTimes: 1 });
    await postHook(session.id, webhookOf(phone.phoneNumberId, [{ from: "16505551234", id: "wamid.img-1", timestamp: String(Math.floor(Date.now() / 1000)), type: "image", image: { caption: "look", mime_type: "image/jpeg", sha256: "x", id: mediaId } }]));
    const pending = await messageById(k.key, "16505551234@c.us", session.id, (m) => m.type === "image");
    expect(["pending", "stored"]).toContain(mediaState(pending));
    const stored = await waitFor(async () => {
      const m = await messageById(k.key, "16505551234@c.us", session.id, (x) => x.type === "image");
      return mediaState(m) === "stored" ? m : undefined;
    }, 15_000, "media stored");
    expect(stored.media).toMatchObject({ status: "stored", mimetype: "image/jpeg", size: bytes.length, caption: "look" });
    expect(await fakeMediaDownloads(mediaId)).toBe(2);
    const got = await download(k.key, stored.id);
    expect(got).toMatchObject({ status: 200, type: "image/jpeg" });
    expect(got.bytes).toEqual(bytes);
    const invalid = (await (await fetch(`${graphUrl()}/__fake/invalid`)).json()) as { path: string }[];
    expect(invalid.filter((r) => r.path.includes(mediaId))).toEqual([]);
    // Another account cannot reach it.
    const other = await createKey("pro");
    expect((await api(`/api/messages/${stored.id}/media`, { key: other.key, redirect: "manual" })).status).toBe(404);
  });

  it("whatsapp: over the type's size limit, or unknown to the network: media.status failed with the reason; GET media is 409", async () => {
    const k = await createKey("pro");
    const { phone, session } = await whatsappSession(k.key);
    const big = await fakeMedia(phone.phoneNumberId, bytesOf(600 * 1024), "image/webp");
    const now = String(Math.floor(Date.now() / 1000));
    await postHook(session.id, webhookOf(phone.phoneNumberId, [
      { from: "16505551234", id: "wamid.big", timestamp: now, type: "sticker", sticker: { mime_type: "image/webp", sha256: "x", id: big, animated: false } },
      { from: "16505551234", id: "wamid.gone", timestamp: now, type: "document", document: { filename: "a.pdf", mime_type: "application/pdf", sha256: "x", id: "999000111222" } },
    ]));
    const failed = await waitFor(async () => {
      const page = await json<{ data: MessageJson[] }>(await api(`/api/messages/16505551234@c.us?sessionId=${session.id}`, { key: k.key }));
      return page.data.every((m) => mediaState(m) === "failed") && page.data.length === 2 ? page.data : undefined;
    }, 15_000, "both failed");
    const sticker = failed.find((m) => m.type === "sticker")!;
    expect((sticker.media as { reason: string }).reason).toMatch(/limited to 512000 bytes/);
    expect((failed.find((m) => m.type === "document")!.media as { reason: string }).reason).toBeTruthy();
    expect(await download(k.key, sticker.id)).toMatchObject({ status: 409, code: "media_failed" });
  });

  it("sandbox: inbound media by base64 is stored at once, by URL fetched; a peer receives the sender's file", async () => {
    const k = await createKey("pro");
    const a = await sandboxSession(k.key);
    const b = await sandboxSession(k.key);
    const png = bytesOf(3000, 11);
    const inline = await api(`/api/sessions/${a.id}/sandbox/inbound`, { method: "POST", key: k.key, json: { from: "+15550007777", type: "image", media: { data: toBase64(png), mimetype: "image/png" }, caption: "inline" } });
    expect(inline.status).toBe(201);
    const m1 = await json<MessageJson>(inline);
    expect(m1.media).toMatchObject({ status: "stored", size: 3000, mimetype: "image/png" });
    expect((await download(k.key, m1.id)).bytes).toEqual(png);

    const ogg = fileOf(OGG, 5000, 13);
    const publicId = await fakeMedia("none", ogg, "audio/ogg", { public: true });
    const byUrl = await api(`/api/sessions/${a.id}/sandbox/inbound`, { method: "POST", key: k.key, json: { from: "+15550007777", type: "audio", media: { url: `${graphUrl()}/cdn/${publicId}` }, voice: true } });
    expect(byUrl.status).toBe(201);
    const m2 = await json<MessageJson>(byUrl);
    expect(m2.media).toMatchObject({ voice: true });
    await waitFor(async () => mediaState(await messageById(k.key, "15550007777@c.us", a.id, (x) => x.id === m2.id)) === "stored", 15_000, "url media stored");
    const got = await download(k.key, m2.id);
    expect(got).toMatchObject({ status: 200, type: "audio/ogg" });
    expect(got.bytes).toEqual(ogg);

    const doc = bytesOf(4000, 17);
    const sent = await api("/api/messages/send-media", { method: "POST", key: k.key, json: { sessionId: a.id, to: b.phoneNumber, type: "document", media: { data: toBase64(doc), mimetype: "application/pdf", filename: "r.pdf" } } });
    expect(sent.status).toBe(201);
    const atB = await waitFor(() => messageById(k.key, `${a.phoneNumber!.slice(1)}@c.us`, b.id, (x) => x.type === "document"), 10_000, "peer document");
    expect(atB.media).toMatchObject({ status: "stored", filename: "r.pdf" });
    expect((await download(k.key, atB.id)).bytes).toEqual(doc);
  });

  it("whatsapp: the settled file is announced once, message.media_stored or message.media_failed with the message as data; a replayed media job announces nothing", async () => {
    const k = await createKey("pro");
    const { phone, session } = await whatsappSession(k.key);
    const hook = await registerWebhook(k, { events: ["message.media_stored", "message.media_failed"] });
    const bytes = bytesOf(8_000, 5);
    const mediaId = await fakeMedia(phone.phoneNumberId, bytes, "image/jpeg");
    const now = String(Math.floor(Date.now() / 1000));
    await postHook(session.id, webhookOf(phone.phoneNumberId, [
      { from: "16505557777", id: "wamid.ev-img", timestamp: now, type: "image", image: { caption: "ok", mime_type: "image/jpeg", sha256: "x", id: mediaId } },
      { from: "16505557777", id: "wamid.ev-gone", timestamp: now, type: "document", document: { filename: "a.pdf", mime_type: "application/pdf", sha256: "x", id: "999000111333" } },
    ]));
    const deliveries = await waitFor(async () => {
      const got = await receivedAt(hook.inbox);
      return got.length >= 2 ? got : undefined;
    }, 15_000, "both media events delivered");
    const bodies = deliveries.map((d) => ({ verified: d.verified, ...(JSON.parse(d.body) as { type: string; data: MessageJson }) }));
    expect(bodies.map((b) => b.type).sort()).toEqual(["message.media_failed", "message.media_stored"]);
    expect(bodies.every((b) => b.verified)).toBe(true);

    const history = await json<{ data: MessageJson[] }>(await api(`/api/messages/16505557777@c.us?sessionId=${session.id}`, { key: k.key }));
    const image = history.data.find((m) => m.type === "image")!;
    const doc = history.data.find((m) => m.type === "document")!;
    expect(image.media).toMatchObject({ status: "stored", size: bytes.length, mimetype: "image/jpeg", caption: "ok" });
    expect(bodies.find((b) => b.type === "message.media_stored")!.data).toEqual(image);
    const failed = bodies.find((b) => b.type === "message.media_failed")!.data;
    expect(failed).toEqual(doc);
    expect(failed.media).toMatchObject({ status: "failed", reason: expect.any(String) });

    // The queue's backstop job, replayed after the file settled: no second download, no second event.
    const stub = env.SESSIONS.getByName(session.id) as unknown as { fetchMedia(id: string, last: boolean): Promise<FetchOutcome> };
    expect(await stub.fetchMedia(image.id, true)).toEqual({ ok: true });
    expect(await stub.fetchMedia(doc.id, true)).toEqual({ ok: true });
    await waitFor(() => eventsOf(k.accountId).filter((e) => e.type.startsWith("message.media_")).length >= 2, 10_000, "events tapped");
    const recorded = await (await shardD1(k.accountId)).prepare("SELECT type, json_extract(payload, '$.data.id') AS id FROM events WHERE account_id = ? AND type LIKE 'message.media_%' ORDER BY type")
      .bind(k.accountId)
      .all<{ type: string; id: string }>();
    expect(recorded.results).toEqual([
      { type: "message.media_failed", id: doc.id },
      { type: "message.media_stored", id: image.id },
    ]);
    expect(await fakeMediaDownloads(mediaId)).toBe(1);
  });
});
