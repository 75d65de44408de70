import { describe, expect, it } from "vitest";
import { compileSync, isPdf, receiverUrl as compileReceiverUrl, uniqueDoc } from "./compile/helpers.ts";
import { api, apiWith, createKey, errorOf, sentTwice } from "./helpers.ts";
import { receivedAt, registerWebhook, waitForDeliveries } from "./webhooks/support.ts";

describe("Idempotency-Key", () => {
  it("same key and body replays the first response; nothing is created twice", async () => {
    const k = await createKey();
    const send = () => api("/api/keys", { method: "POST", key: k.key, json: { name: "once" }, headers: { "Idempotency-Key": "abc-1" } });
    const { first, replay } = await sentTwice(send, 201);
    expect(replay).toEqual(first);
    const list = (await (await api("/api/keys", { key: k.key })).json()) as { data: unknown[] };
    expect(list.data).toHaveLength(2); // the test key + one created
  });

  it("same key with another body is 422 idempotency_key_reused", async () => {
    const k = await createKey();
    await api("/api/keys", { method: "POST", key: k.key, json: { name: "a" }, headers: { "Idempotency-Key": "abc-2" } });
    const res = await api("/api/keys", { method: "POST", key: k.key, json: { name: "b" }, headers: { "Idempotency-Key": "abc-2" } });
    expect(res.status).toBe(422);
    expect((await errorOf(res)).code).toBe("idempotency_key_reused");
  });

  it("keys are scoped by account", async () => {
    const a = await createKey();
    const b = await createKey();
    const ra = await api("/api/keys", { method: "POST", key: a.key, json: { name: "a" }, headers: { "Idempotency-Key": "shared" } });
    const rb = await api("/api/keys", { method: "POST", key: b.key, json: { name: "b" }, headers: { "Idempotency-Key": "shared" } });
    expect(ra.status).toBe(201);
    expect(rb.status).toBe(201);
    expect(rb.headers.get("Idempotent-Replayed")).toBeNull();
  });

  it("a failed validation is replayed too, and an invalid key header is 400", async () => {
    const k = await createKey();
    const send = () => api("/api/keys", { method: "POST", key: k.key, json: { name: 42 }, headers: { "Idempotency-Key": "invalid-1" } });
    const { first, replay } = await sentTwice<{ error: { code: string } }>(send, 400);
    expect(first.error.code).toBe("invalid_request");
    expect(replay).toEqual(first);
    const bad = await api("/api/keys", { method: "POST", key: k.key, json: { name: "x" }, headers: { "Idempotency-Key": "x".repeat(300) } });
    expect(bad.status).toBe(400);
    expect((await errorOf(bad)).code).toBe("invalid_request");
  });

  it("a 5xx is not stored: the retry with the same key runs again", async () => {
    const k = await createKey();
    const json = { source: uniqueDoc("idempotency-5xx") };
    const headers = { "Idempotency-Key": "after-5xx" };
    // the same request while the compiler is busy (its own 503), then with the compiler up
    const busy = await apiWith({ COMPILER_URL: `${compileReceiverUrl()}/busy` }, "/v1/compile/sync", { method: "POST", key: k.key, json, headers });
    expect(busy.status).toBe(503);
    const retry = await compileSync(k.key, json, headers);
    expect(retry.status).toBe(200);
    expect(retry.headers.get("Idempotent-Replayed")).toBeNull();
    expect(isPdf(await retry.arrayBuffer())).toBe(true);
    const replay = await compileSync(k.key, json, headers);
    expect(replay.status).toBe(200);
    expect(replay.headers.get("Idempotent-Replayed")).toBe("true");
  });

  it("409 idempotency_key_in_progress while the first request is still running; then its reply is replayed", async () => {
    const k = await createKey();
    // a receiver that answers the test delivery after 3 s (the delivery may take up to 10 s here)
    const hook = await registerWebhook(k, {}, { script: ["timeout"], hangMs: 3_000 });
    const init = { method: "POST", key: k.key, headers: { "Idempotency-Key": "slow-1" } };
    const first = apiWith({ WEBHOOK_TIMEOUT_MS: "10000" }, `/api/webhooks/${hook.id}/test`, init);
    await waitForDeliveries(hook.inbox, 1); // the first holds the key and waits for the receiver
    const second = await api(`/api/webhooks/${hook.id}/test`, init);
    expect(second.status).toBe(409);
    expect(second.headers.get("Retry-After")).toBe("1");
    expect((await errorOf(second)).code).toBe("idempotency_key_in_progress");
    const done = await first;
    expect(done.status).toBe(200);
    const body = await done.json();
    const third = await api(`/api/webhooks/${hook.id}/test`, init);
    expect(third.status).toBe(200);
    expect(third.headers.get("Idempotent-Replayed")).toBe("true");
    expect(await third.json()).toEqual(body);
    expect(await receivedAt(hook.inbox)).toHaveLength(1); // sent once, by the first request
  });
});
