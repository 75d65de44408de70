import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { fromBase64 } from "../../../src/platform/crypto.ts";
import { api, createKey, errorOf, sentTwice } from "../helpers.ts";
import { uniquePhone } from "../campaigns/support.ts";

async function storedBody(accountId: string, key: string): Promise<string> {
  const row = await env.DB.prepare("SELECT response_body AS b FROM idempotency_keys WHERE account_id = ? AND key = ?").bind(accountId, key).first<{ b: string | null }>();
  const stored = row?.b ?? "";
  // Whatever the stored form, neither it nor its base64 decoding may contain the secret.
  let decoded = "";
  try {
    decoded = new TextDecoder().decode(fromBase64(stored.slice(stored.indexOf(":") + 1)));
  } catch {
    /* not base64 */
  }
  return `${stored}\n${decoded}`;
}

describe("idempotent replies never keep a secret in clear", () => {
  it("POST /api/keys: the tmk_ key is not readable in the stored reply, and the replay still returns it", async () => {
    const k = await createKey();
    const send = () => api("/api/keys", { method: "POST", key: k.key, json: { name: "ci" }, headers: { "Idempotency-Key": "secret-1" } });
    const { first: created, replay } = await sentTwice<{ key: string }>(send, 201);
    expect(created.key).toMatch(/^tmk_/);
    const stored = await storedBody(k.accountId, "secret-1");
    expect(stored).not.toContain(created.key);
    expect(stored).not.toContain("tmk_");
    expect(replay.key).toBe(created.key);
  });

  it("POST /api/webhooks: the whsec_ secret is not readable in the stored reply", async () => {
    const k = await createKey();
    const res = await api("/api/webhooks", { method: "POST", key: k.key, json: { url: "http://127.0.0.1:9/h", events: ["*"] }, headers: { "Idempotency-Key": "secret-2" } });
    expect(res.status).toBe(201);
    const { secret } = (await res.json()) as { secret: string };
    expect(secret).toMatch(/^whsec_/);
    const stored = await storedBody(k.accountId, "secret-2");
    expect(stored).not.toContain(secret);
    expect(stored).not.toContain("whsec_");
  });
});

describe("taking over an expired Idempotency-Key is atomic", () => {
  it("of concurrent retries of an expired key exactly one runs", async () => {
    const k = await createKey();
    const idem = "expired-1";
    const past = Date.now() - 2 * 24 * 3600_000;
    await env.DB.prepare(
      "INSERT INTO idempotency_keys (account_id, key, request_hash, state, response_status, response_headers, response_body, created_at, expires_at) VALUES (?, ?, 'old', 'done', 201, '{}', NULL, ?, ?)",
    )
      .bind(k.accountId, idem, past, past + 24 * 3600_000)
      .run();
    const phone = uniquePhone();
    const results = await Promise.all(
      Array.from({ length: 6 }, () => api("/api/contacts", { method: "POST", key: k.key, json: { phone }, headers: { "Idempotency-Key": idem } })),
    );
    const outcomes = await Promise.all(
      results.map(async (r) => (r.status === 201 ? (r.headers.get("Idempotent-Replayed") ? "replayed" : "ran") : (await errorOf(r)).code)),
    );
    // Never a second run (which would answer contact_exists), only waits and replays.
    expect(outcomes.filter((o) => o === "ran")).toHaveLength(1);
    expect(outcomes.every((o) => o === "ran" || o === "replayed" || o === "idempotency_key_in_progress")).toBe(true);
    expect(outcomes).not.toContain("contact_exists");
  });
});
