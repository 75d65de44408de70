import { describe, expect, it } from "vitest";
import { ENTERPRISE_DEFAULT_KEY_LIMIT, keyLimitFor } from "../../../src/platform/plans.ts";
import { api, createKey, errorOf } from "../helpers.ts";

const newKey = (key: string, name = "k") => api("/api/keys", { method: "POST", key, json: { name } });

describe("active API keys per account are capped by plan", () => {
  it("Free: 3 active keys, then 409 key_limit_reached; revoking one frees a place", async () => {
    const k = await createKey("free"); // the account's first key
    expect((await newKey(k.key)).status).toBe(201);
    const third = await newKey(k.key);
    expect(third.status).toBe(201);
    const refused = await newKey(k.key);
    expect(refused.status).toBe(409);
    const err = await errorOf(refused);
    expect(err.code).toBe("key_limit_reached");
    expect(err.limit).toBe(3);
    const { id } = (await third.json()) as { id: string };
    expect((await api(`/api/keys/${id}`, { method: "DELETE", key: k.key })).status).toBe(200);
    expect((await newKey(k.key)).status).toBe(201);
    expect((await newKey(k.key)).status).toBe(409);
  });

  it("concurrent creates cannot pass the cap together", async () => {
    const k = await createKey("free");
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => newKey(k.key, `c${i}`)));
    expect(results.filter((r) => r.status === 201)).toHaveLength(2);
    expect(results.filter((r) => r.status === 409)).toHaveLength(6);
    const list = (await (await api("/api/keys?limit=100", { key: k.key })).json()) as { data: { revokedAt: string | null }[] };
    expect(list.data.filter((key) => key.revokedAt === null)).toHaveLength(3);
  });

  it("Pro: 20 active keys", async () => {
    const k = await createKey("pro");
    for (let i = 0; i < 19; i++) expect((await newKey(k.key, `p${i}`)).status).toBe(201);
    expect((await errorOf(await newKey(k.key))).code).toBe("key_limit_reached");
  });

  it("Enterprise: ENTERPRISE_MAX_ACTIVE_KEYS, else the default", () => {
    expect(keyLimitFor("free", {})).toBe(3);
    expect(keyLimitFor("pro", {})).toBe(20);
    expect(keyLimitFor("enterprise", {})).toBe(ENTERPRISE_DEFAULT_KEY_LIMIT);
    expect(keyLimitFor("enterprise", { ENTERPRISE_MAX_ACTIVE_KEYS: "250" })).toBe(250);
    expect(keyLimitFor("enterprise", { ENTERPRISE_MAX_ACTIVE_KEYS: "lots" })).toBe(ENTERPRISE_DEFAULT_KEY_LIMIT);
  });
});
