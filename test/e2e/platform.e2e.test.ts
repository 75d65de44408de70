import { describe, expect, it } from "vitest";
import { call, keysCli, newKey, typedClient } from "./client.ts";

// Side by side: the wait for the key cache to run out (idle) and the CLI runs (busy) overlap.
describe.concurrent("platform end to end (npm run dev)", () => {
  it("serves /health, /openapi.json and /docs without a key", async () => {
    expect((await call("/health")).status).toBe(200);
    const doc = (await (await call("/openapi.json")).json()) as { openapi: string };
    expect(doc.openapi).toBe("3.1.0");
    expect((await call("/docs")).status).toBe(200);
  });

  // two CLI runs and up to 45 s of waiting for the key cache
  it("a key created with the CLI while the server runs works at once; revoked, it stops", { timeout: 240_000 }, async () => {
    const out = await keysCli(["create", "--name", "e2e", "--plan", "free"]);
    const key = out.trim().split("\n").pop()!;
    const keyId = out.match(/key id (key_\w+)/)![1]!;
    const res = await call("/api/account", { key });
    expect(res.status).toBe(200);
    expect(res.headers.get("X-RateLimit-Limit")).toBe("100");
    expect(res.headers.get("X-Request-Id")).toBeTruthy();
    await keysCli(["revoke", keyId]);
    // The isolate caches lookups for at most 30 s; a revoked key must be refused within 60 s.
    const deadline = Date.now() + 45_000;
    let status = 200;
    while (Date.now() < deadline && status === 200) {
      status = (await call("/api/account", { key })).status;
      if (status === 200) await new Promise((r) => setTimeout(r, 1000));
    }
    expect(status).toBe(401);
  });

  // CLI runs, each a wrangler process of its own (one per command): half a minute on a loaded machine. The cap and the plan
  // change use accounts of their own, so the two tests run side by side.
  it("--account adds a key to an account, up to the plan's cap on active keys unless --force", { timeout: 300_000 }, async () => {
    // an account that does not exist is refused (beside the first run: each costs seconds)
    const [out] = await Promise.all([
      keysCli(["create", "--name", "e2e", "--plan", "free"]),
      expect(keysCli(["create", "--name", "stray", "--account", "acc_doesnotexist"])).rejects.toThrow(/no account acc_doesnotexist/),
    ]);
    const accountId = out.match(/account (acc_\w+)/)![1]!;
    const second = (await keysCli(["create", "--name", "second", "--account", accountId])).trim().split("\n").pop()!;
    const { data: acct } = await typedClient(second).GET("/api/account");
    expect(acct?.id).toBe(accountId);
    // the plan's cap on active keys holds here too (Free: 3); --force goes over it
    await keysCli(["create", "--name", "third", "--account", accountId]);
    await expect(keysCli(["create", "--name", "fourth", "--account", accountId])).rejects.toThrow(/already has 3 active API keys/);
    await keysCli(["create", "--name", "fourth", "--account", accountId, "--force"]);
  });

  it("keys plan changes the limit of an account's keys", { timeout: 300_000 }, async () => {
    const out = await keysCli(["create", "--name", "e2e", "--plan", "free"]);
    const accountId = out.match(/account (acc_\w+)/)![1]!;
    await keysCli(["plan", accountId, "enterprise", "--limit", "2500"]);
    const fresh = await newKey("pro", ["--account", accountId]);
    const res = await call("/api/account", { key: fresh });
    expect(res.headers.get("X-RateLimit-Limit")).toBe("2500");
  });

  it("answers 401 with the error body and rate-limit headers without a key", async () => {
    const res = await call("/api/account");
    expect(res.status).toBe(401);
    expect(res.headers.get("Content-Type")).toContain("application/json");
    expect(res.headers.get("X-RateLimit-Limit")).toBeTruthy();
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("unauthorized");
  });
});
