import { listDurableObjectIds } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { api, createKey, errorOf, freshIp } from "../helpers.ts";
import { hubSignature, json, type MessageJson } from "./support.ts";
import { APP_SECRET, textWebhook, whatsappSession } from "./whatsapp-support.ts";

/** An endless (or `max`-chunk) JSON-looking stream of 64 KiB chunks that counts how many were pulled. */
function countingStream(max = Infinity): { body: ReadableStream<Uint8Array>; pulled: () => number } {
  const piece = new TextEncoder().encode(`{"x":"${"a".repeat(64 * 1024)}`);
  let pulled = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (pulled >= max) return controller.close();
      pulled++;
      controller.enqueue(piece);
    },
  });
  return { body, pulled: () => pulled };
}

const postStream = (path: string, body: ReadableStream<Uint8Array>, ip = freshIp()) =>
  api(path, { method: "POST", body, ip, headers: { "Content-Type": "application/json" }, duplex: "half" } as RequestInit & { ip: string });

describe("/hooks/whatsapp: hostile posts", () => {
  it("an unknown session is 404 before any of the body is read and without a Durable Object", async () => {
    const { body, pulled } = countingStream(32);
    const res = await postStream("/hooks/whatsapp/ses_hooknobody", body);
    expect(res.status).toBe(404);
    expect((await errorOf(res)).code).toBe("not_found");
    // The runtime pulls a chunk or two ahead; none was consumed past that.
    expect(pulled()).toBeLessThanOrEqual(2);
    const ids = await listDurableObjectIds(env.SESSIONS);
    const id = env.SESSIONS.idFromName("ses_hooknobody");
    expect(ids.some((x) => x.equals(id))).toBe(false);
  });

  it("a chunked body over 1 MiB for a real session is 413, abandoned as soon as it passes the cap", async () => {
    const k = await createKey("pro");
    const { session } = await whatsappSession(k.key);
    const { body, pulled } = countingStream(128); // 8 MiB if read to the end
    const res = await postStream(`/hooks/whatsapp/${session.id}`, body);
    expect(res.status).toBe(413);
    expect((await errorOf(res)).code).toBe("payload_too_large");
    expect(pulled()).toBeLessThan(24);
  });

  it("a change for another phone number of the same app is not recorded as this session's", async () => {
    const k = await createKey("pro");
    const { phone, session } = await whatsappSession(k.key);
    for (const [number, id] of [["999000111222", "wamid.other"], [phone.phoneNumberId, "wamid.mine"]] as const) {
      const body = JSON.stringify(textWebhook(number, id, `for ${number}`));
      const res = await api(`/hooks/whatsapp/${session.id}`, { method: "POST", body, ip: freshIp(), headers: { "Content-Type": "application/json", "X-Hub-Signature-256": await hubSignature(APP_SECRET, body) } });
      expect(res.status).toBe(200);
    }
    const history = await json<{ data: MessageJson[] }>(await api(`/api/messages/16505551234@c.us?sessionId=${session.id}`, { key: k.key }));
    expect(history.data.map((m) => m.text)).toEqual([`for ${phone.phoneNumberId}`]);
  });

  it("is rate limited per client IP (HOOK_RATE_LIMIT_PER_MIN), apart from other IPs", async () => {
    const limit = Number(env.HOOK_RATE_LIMIT_PER_MIN);
    expect(limit).toBeGreaterThan(0);
    const ip = freshIp();
    const statuses: number[] = [];
    for (let sent = 0; sent < limit + 5; sent += 50) {
      const wave = Array.from({ length: Math.min(50, limit + 5 - sent) }, () => api("/hooks/whatsapp/ses_hooklimit", { method: "POST", body: "{}", ip }).then((r) => r.status));
      statuses.push(...(await Promise.all(wave)));
    }
    expect(statuses.filter((s) => s === 404)).toHaveLength(limit);
    expect(statuses.filter((s) => s === 429)).toHaveLength(5);
    const over = await api("/hooks/media/med_0000000000000000000000", { ip });
    expect(over.status).toBe(429);
    expect(Number(over.headers.get("Retry-After"))).toBeGreaterThan(0);
    expect((await errorOf(over)).code).toBe("rate_limited");
    expect((await api("/hooks/whatsapp/ses_hooklimit", { method: "POST", body: "{}", ip: freshIp() })).status).toBe(404);
  });

  it("a verification with the wrong token is 403 with the JSON error body", async () => {
    const k = await createKey("pro");
    const { session } = await whatsappSession(k.key);
    const res = await api(`/hooks/whatsapp/${session.id}?hub.mode=subscribe&hub.verify_token=wrong&hub.challenge=1`, { ip: freshIp() });
    expect(res.status).toBe(403);
    expect(res.headers.get("Content-Type")).toContain("application/json");
    expect((await errorOf(res)).code).toBe("forbidden");
  });
});
