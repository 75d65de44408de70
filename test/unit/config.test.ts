import { describe, expect, it } from "vitest";
import { config, DEFAULT_RETRY_SCHEDULE, parseNewAccountShards, shardBindings } from "../../src/platform/config.ts";
import { itemsPerStatement } from "../../src/platform/d1.ts";

const env = (vars: Record<string, string>) => vars as unknown as Env;

describe("config(env)", () => {
  it("missing or junk vars take their defaults", () => {
    const c = config(env({ WEBHOOK_TIMEOUT_MS: "soon", COMPILER_INSTANCES: "2.5", UNAUTH_RATE_LIMIT_PER_MIN: "-3" }));
    expect(c.webhooks.timeoutMs).toBe(15_000);
    expect(c.compile.instances).toBe(4);
    expect(c.rateLimits.unauthenticatedPerMinute).toBe(60);
    expect(c.webhooks.retrySchedule).toEqual(DEFAULT_RETRY_SCHEDULE);
    expect(c.sandbox).toEqual({ deliveredMs: 200, readMs: 1000, templateApprovalMs: 2000 });
  });

  it("parses set values into typed ones", () => {
    const c = config(env({ WEBHOOK_RETRY_SCHEDULE: "1,2", WEBHOOK_DISABLE_AFTER_DAYS: "2", COMPILER_URL: "http://x", HOOK_RATE_LIMIT_PER_MIN: "9" }));
    expect(c.webhooks.retrySchedule).toEqual([1, 2]);
    expect(c.webhooks.disableAfterMs).toBe(2 * 86400_000);
    expect(c.compile.compilerUrl).toBe("http://x");
    expect(c.rateLimits.hooksPerMinute).toBe(9);
  });

  it("ALLOW_LOOPBACK_URLS gates loopback; its deprecated name WEBHOOK_ALLOW_LOOPBACK still works", () => {
    expect(config(env({})).allowLoopbackUrls).toBe(false);
    expect(config(env({ ALLOW_LOOPBACK_URLS: "1" })).allowLoopbackUrls).toBe(true);
    expect(config(env({ WEBHOOK_ALLOW_LOOPBACK: "1" })).allowLoopbackUrls).toBe(true);
    expect(config(env({ ALLOW_LOOPBACK_URLS: "0", WEBHOOK_ALLOW_LOOPBACK: "0" })).allowLoopbackUrls).toBe(false);
  });

  it("WEBHOOK_LEASE_MS sets the leases, never shorter than an attempt's timeout + 20 s", () => {
    expect(config(env({})).webhooks.leaseMs).toBe(60_000);
    expect(config(env({ WEBHOOK_LEASE_MS: "90000" })).webhooks.leaseMs).toBe(90_000);
    expect(config(env({ WEBHOOK_LEASE_MS: "1" })).webhooks.leaseMs).toBe(35_000);
    expect(config(env({ WEBHOOK_LEASE_MS: "1", WEBHOOK_TIMEOUT_MS: "5000" })).webhooks.leaseMs).toBe(25_000);
  });

  it("is parsed once per env object", () => {
    const e = env({});
    expect(config(e)).toBe(config(e));
  });
});

describe("D1 parameter limit", () => {
  it("sizes parts so that a statement binds at most 100 parameters", () => {
    expect(itemsPerStatement(14)).toBe(7);
    expect(itemsPerStatement(3, 7)).toBe(31);
    expect(itemsPerStatement(1, 20)).toBe(80);
  });

  it("shards: SHARD_<n> bindings counted from 0 to the first gap; NEW_ACCOUNT_SHARDS keeps bound shards only, else all", () => {
    const d1 = { prepare: () => null };
    expect(shardBindings({ SHARD_0: d1, SHARD_1: d1, SHARD_3: d1 })).toBe(2);
    expect(shardBindings({ SHARD_1: d1, SHARD_0: "not a database" })).toBe(0);
    expect(parseNewAccountShards("1", 2)).toEqual([1]);
    expect(parseNewAccountShards(" 1 ,0,1", 2)).toEqual([0, 1]);
    expect(parseNewAccountShards("7,x,-1,1e3", 2)).toEqual([0, 1]);
    expect(parseNewAccountShards("", 3)).toEqual([0, 1, 2]);
    // No shard bound: the directory is the one shard.
    expect(parseNewAccountShards("0,1", 0)).toEqual([0]);
    expect(config(env({ NEW_ACCOUNT_SHARDS: "1" })).shards).toEqual({ count: 1, newAccountShards: [0] });
    expect(config({ SHARD_0: d1, SHARD_1: d1, NEW_ACCOUNT_SHARDS: "1" } as unknown as Env).shards).toEqual({ count: 2, newAccountShards: [1] });
  });
});
