import { describe, expect, it } from "vitest";
import { api, createKey, errorOf, sentTwice } from "./helpers.ts";

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
    const bad = await api("/api/keys", { method: "POST", key: k.key, json: { name: "x" }, headers: { "Idempotency-Key": "x".repeat(300) } });
    expect(bad.status).toBe(400);
  });
});
