import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { signedMediaUrl } from "../../../src/messaging/media/store.ts";
import { api, createKey } from "../helpers.ts";
import { downloadMedia, fakeMedia, getMessage, graphUrl, json, sandboxSession, toBase64, waitFor, type Downloaded, type MessageJson } from "./support.ts";
import { postHook, webhookOf, whatsappSession } from "./whatsapp-support.ts";

const text = (s: string) => new TextEncoder().encode(s);
const PNG = Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d, 0x49, 0x48, 0x44, 0x52, 1, 2, 3, 4]);
const HTML = text("<!doctype html><script>fetch('/api/sessions').then(r=>r.text()).then(alert)</script>");
const SVG = text('<svg xmlns="http://www.w3.org/2000/svg" onload="alert(document.domain)"/>');

/** Every served file: never sniffed, never scripted, whatever it is. */
function expectInert(got: Downloaded) {
  expect(got.status).toBe(200);
  expect(got.headers!.get("X-Content-Type-Options")).toBe("nosniff");
  expect(got.headers!.get("Content-Security-Policy")).toBe("sandbox; default-src 'none'");
}

/** Served as an opaque download, never as the type its sender chose. */
function expectDownload(got: Downloaded, bytes: Uint8Array, filename: RegExp) {
  expectInert(got);
  expect(got.type).toBe("application/octet-stream");
  expect(got.headers!.get("Content-Disposition")).toMatch(new RegExp(`^attachment; filename="${filename.source}"$`));
  expect(got.bytes).toEqual(bytes);
}

const stored = (key: string, chatId: string, id: string, sessionId: string) =>
  waitFor(async () => {
    const m = await getMessage(key, chatId, id, sessionId);
    return (m?.media as { status?: string } | undefined)?.status === "stored" ? m : undefined;
  }, 15_000, "media stored");

describe("messaging: media is served inert, typed by its bytes", () => {
  it("sandbox inbound by URL: an 'image' whose server answers text/html is a download, nosniff and sandboxed", async () => {
    const k = await createKey("pro");
    const s = await sandboxSession(k.key);
    const id = await fakeMedia("none", HTML, "text/html", { public: true });
    const res = await api(`/api/sessions/${s.id}/sandbox/inbound`, { method: "POST", key: k.key, json: { from: "+15550004444", type: "image", media: { url: `${graphUrl()}/cdn/${id}` } } });
    expect(res.status).toBe(201);
    const m = await json<MessageJson>(res);
    await stored(k.key, "15550004444@c.us", m.id, s.id);
    expectDownload(await downloadMedia(k.key, m.id), HTML, /med_[0-9a-z]{21}/);
  });

  it("whatsapp inbound: declared types are checked against the bytes; real images stay images", async () => {
    const k = await createKey("pro");
    const { phone, session } = await whatsappSession(k.key);
    const svg = await fakeMedia(phone.phoneNumberId, SVG, "image/svg+xml");
    const fakeJpeg = await fakeMedia(phone.phoneNumberId, HTML, "image/jpeg");
    const png = await fakeMedia(phone.phoneNumberId, PNG, "image/png");
    const doc = await fakeMedia(phone.phoneNumberId, HTML, "text/html");
    const now = String(Math.floor(Date.now() / 1000));
    const from = "16505554444";
    await postHook(session.id, webhookOf(phone.phoneNumberId, [
      { from, id: "wamid.svg", timestamp: now, type: "image", image: { caption: "svg", mime_type: "image/svg+xml", sha256: "x", id: svg } },
      { from, id: "wamid.fake-jpeg", timestamp: now, type: "image", image: { caption: "fake", mime_type: "image/jpeg", sha256: "x", id: fakeJpeg } },
      { from, id: "wamid.png", timestamp: now, type: "image", image: { caption: "png", mime_type: "image/png", sha256: "x", id: png } },
      { from, id: "wamid.doc", timestamp: now, type: "document", document: { caption: "doc", filename: 'x.html"\r\nSet-Cookie: a=b', mime_type: "text/html", sha256: "x", id: doc } },
    ]));
    const all = await waitFor(async () => {
      const page = await json<{ data: MessageJson[] }>(await api(`/api/messages/${from}@c.us?sessionId=${session.id}`, { key: k.key }));
      return page.data.length === 4 && page.data.every((m) => (m.media as { status?: string }).status === "stored") ? page.data : undefined;
    }, 15_000, "four files stored");
    const byCaption = (caption: string) => all.find((m) => (m.media as { caption?: string }).caption === caption)!;
    expectDownload(await downloadMedia(k.key, byCaption("svg").id), SVG, /med_[0-9a-z]{21}/);
    expectDownload(await downloadMedia(k.key, byCaption("fake").id), HTML, /med_[0-9a-z]{21}/);
    const image = await downloadMedia(k.key, byCaption("png").id);
    expectInert(image);
    expect(image).toMatchObject({ type: "image/png", bytes: PNG });
    expect(image.headers!.get("Content-Disposition")).toBe("inline");
    const named = await downloadMedia(k.key, byCaption("doc").id);
    expectDownload(named, HTML, /x\.html___Set-Cookie_ a_b/);
    expect(named.headers!.get("Set-Cookie")).toBeNull();
  });

  it("uploads: a base64 'image/png' that is HTML is stored and served as a download", async () => {
    const k = await createKey("pro");
    const a = await sandboxSession(k.key);
    const res = await api("/api/messages/send-media", { method: "POST", key: k.key, json: { sessionId: a.id, to: "+15550005555", type: "image", media: { data: toBase64(HTML), mimetype: "image/png" } } });
    expect(res.status).toBe(201);
    const m = await json<MessageJson>(res);
    expectDownload(await downloadMedia(k.key, m.id), HTML, /med_[0-9a-z]{21}/);
  });

  it("files stored before the check (with their sender's type) are checked when served", async () => {
    const html = "med_legacyhtml00000000000";
    const jpeg = "med_legacyjpeg00000000000";
    const jpegBytes = Uint8Array.from([0xff, 0xd8, 0xff, 0xe0, 0, 0x10, 0x4a, 0x46, 0x49, 0x46, 0, 1, 1, 0, 0, 1, 0, 1]);
    await env.FILES.put(`media/${html}`, HTML, { httpMetadata: { contentType: "text/html" }, customMetadata: { accountId: "acc_x" } });
    await env.FILES.put(`media/${jpeg}`, jpegBytes, { httpMetadata: { contentType: "image/jpeg", contentDisposition: 'attachment; filename="cat.jpg"' }, customMetadata: { accountId: "acc_x" } });
    const fetchSigned = async (id: string): Promise<Downloaded> => {
      const url = new URL(await signedMediaUrl(env, "http://x", id));
      const res = await api(url.pathname + url.search);
      return { status: res.status, type: res.headers.get("content-type"), headers: res.headers, bytes: new Uint8Array(await res.arrayBuffer()) };
    };
    expectDownload(await fetchSigned(html), HTML, new RegExp(html));
    const cat = await fetchSigned(jpeg);
    expectInert(cat);
    expect(cat).toMatchObject({ type: "image/jpeg", bytes: jpegBytes });
    expect(cat.headers!.get("Content-Disposition")).toBe('inline; filename="cat.jpg"');
  });
});
