import { applyD1Migrations, env } from "cloudflare:test";
import { afterAll, expect } from "vitest";
import { invalidEvents, syntheticEventIds } from "./event-tap.ts";
import { shardIndexes } from "../../src/platform/shards.ts";
import { routeTestLogs } from "./log-routing.ts";
import { expectNoInvalidGraphTraffic } from "./messaging/graph-traffic.ts";

// The test files' own imports of the logger too (see log-routing.ts).
routeTestLogs();

declare global {
  namespace Cloudflare {
    interface Env {
      TEST_MIGRATIONS: import("cloudflare:test").D1Migration[];
      TEST_SHARD_MIGRATIONS: import("cloudflare:test").D1Migration[];
      /** A shard bound only in the tests (vitest.workers.config.ts), as if just added. */
      SHARD_2: D1Database;
    }
  }
}

// Idempotent: applies only the migrations not applied yet. The directory, then every shard.
await applyD1Migrations(env.DB, env.TEST_MIGRATIONS);
for (const i of shardIndexes(env)) await applyD1Migrations(env[`SHARD_${i}` as "SHARD_0"], env.TEST_SHARD_MIGRATIONS);

// Every event a test file caused matches the event catalog's schema of its type.
afterAll(() => {
  const invalid = invalidEvents.filter((e) => !syntheticEventIds.has(e.id));
  expect(invalid.map((e) => `${e.type}: ${e.issues}`).join("\n"), "events whose body does not match GET /api/event-types").toBe("");
});

// Every request this file's fake Graph API numbers received, every answer the fake gave them and every webhook
// checked for them fits the Cloud API reference (the run's teardown checks all of them again).
afterAll(() => expectNoInvalidGraphTraffic());
