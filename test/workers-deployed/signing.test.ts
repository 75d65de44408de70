import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { hmacSha256, toBase64, toBase64Url } from "../../src/platform/crypto.ts";
import { api, createKey, errorOf } from "../workers/helpers.ts";
import { json, sandboxSession } from "../workers/messaging/support.ts";

// Deployed without SIGNING_SECRET (README "Configuration" lists it as a secret to put, but nothing
// requires it). What depends on it must still work as documented, never answer 5xx.

const SIGNING_KEY = "media/_signing-key";

/** Sends `bytes` as a base64 image; answers where GET /api/messages/{id}/media redirects to. */
async function sendAndLocate(key: string, sessionId: string, bytes: Uint8Array): Promise<URL> {
  const sent = await api("/api/messages/send-media", { method: "POST", key, json: { sessionId, to: "+15550001111", type: "image", media: { data: toBase64(bytes), mimetype: "image/png" } } });
  expect(sent.status).toBe(201);
  const { id } = await json<{ id: string }>(sent);
  const res = await api(`/api/messages/${id}/media`, { key, redirect: "manual" });
  expect(res.status).toBe(302);
  return new URL(res.headers.get("Location")!);
}

describe("deployed without SIGNING_SECRET", () => {
  it("uploaded media: signed URLs use one random key kept in R2; they serve the file, forged ones are 404", async () => {
    const k = await createKey("pro");
    const s = await sandboxSession(k.key);
    // a real PNG signature first: files are served as the type their bytes are
    const PNG = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
    const bytes = Uint8Array.from({ length: 3000 }, (_, i) => (i < PNG.length ? PNG[i]! : (i * 31 + 7) % 256));
    const url = await sendAndLocate(k.key, s.id, bytes);
    const [, , , mediaId] = url.pathname.split("/");
    const exp = url.searchParams.get("exp")!;
    const sig = url.searchParams.get("sig")!;

    const file = await api(url.pathname + url.search);
    expect(file.status).toBe(200);
    expect(file.headers.get("content-type")).toBe("image/png");
    expect(new Uint8Array(await file.arrayBuffer())).toEqual(bytes);

    // Signed with the key kept in R2, which every isolate reads: a per-isolate key would break URLs
    // handed to the network by another isolate.
    const stored = await env.FILES.get(SIGNING_KEY);
    expect(stored, "the fallback signing key in R2").not.toBeNull();
    const secret = await stored!.text();
    expect(secret.length).toBeGreaterThanOrEqual(40);
    expect(sig).toBe(toBase64Url(await hmacSha256(secret, `media:${mediaId}.${exp}`)));
    // Created once: a later upload is signed with the same key.
    const again = await sendAndLocate(k.key, s.id, bytes.subarray(0, 100));
    expect(await (await env.FILES.get(SIGNING_KEY))!.text()).toBe(secret);
    expect(again.searchParams.get("sig")).toBe(toBase64Url(await hmacSha256(secret, `media:${again.pathname.split("/")[3]}.${again.searchParams.get("exp")}`)));

    const forged = [
      `?exp=${exp}&sig=${toBase64Url(await hmacSha256("test-signing-secret", `media:${mediaId}.${exp}`))}`, // a guessed secret
      `?exp=${Number(exp) + 60}&sig=${sig}`, // a later expiry
      `?exp=${exp}&sig=${sig.slice(0, -1)}${sig.endsWith("A") ? "B" : "A"}`,
      `?exp=${exp}`,
    ];
    for (const q of forged) {
      const res = await api(url.pathname + q);
      expect(res.status, q).toBe(404);
      expect((await errorOf(res)).code, q).toBe("not_found");
    }
    // The key is not itself a media id.
    expect((await api(`/hooks/${SIGNING_KEY}?exp=${exp}&sig=${sig}`)).status).toBe(404);
  });

  it("idempotent replies that hold a secret (webhook, API key) are not stored: the replay has the status and no body", async () => {
    const k = await createKey("pro");
    const requests: Array<{ path: string; body: unknown; secret: RegExp }> = [
      { path: "/api/webhooks", body: { url: "https://hooks.example.com/in", events: ["*"] }, secret: /^whsec_/ },
      { path: "/api/keys", body: { name: "once" }, secret: /^tmk_/ },
    ];
    for (const [i, r] of requests.entries()) {
      const idem = `deployed-${i}`;
      const send = (body: unknown) => api(r.path, { method: "POST", key: k.key, json: body, headers: { "Idempotency-Key": idem } });
      const first = await send(r.body);
      expect(first.status, r.path).toBe(201);
      const created = await json<{ secret?: string; key?: string }>(first);
      const secret = created.secret ?? created.key ?? "";
      expect(secret, r.path).toMatch(r.secret);

      const replay = await send(r.body);
      expect(replay.status, r.path).toBe(201);
      expect(replay.headers.get("Idempotent-Replayed"), r.path).toBe("true");
      expect(await replay.text(), r.path).toBe("");

      const row = await env.DB.prepare("SELECT * FROM idempotency_keys WHERE account_id = ? AND key = ?").bind(k.accountId, idem).first<Record<string, unknown>>();
      expect(row, r.path).toMatchObject({ state: "done", response_status: 201, response_body: null, response_r2_key: null });
      expect(JSON.stringify(row)).not.toContain(secret);

      const reused = await send({ ...(r.body as object), description: "other" });
      expect(reused.status, r.path).toBe(422);
      expect((await errorOf(reused)).code).toBe("idempotency_key_reused");
    }
    expect((await env.FILES.list({ prefix: `idempotency/${k.accountId}/` })).objects).toEqual([]);
  });
});
