import { applyD1Migrations, env } from "cloudflare:test";
import { afterAll, expect } from "vitest";
import { invalidEvents, syntheticEventIds } from "./event-tap.ts";

declare global {
  namespace Cloudflare {
    interface Env {
      TEST_MIGRATIONS: import("cloudflare:test").D1Migration[];
    }
  }
}

// Idempotent: applies only the migrations not applied yet.
await applyD1Migrations(env.DB, env.TEST_MIGRATIONS);

// Every event a test file caused matches the event catalog's schema of its type.
afterAll(() => {
  const invalid = invalidEvents.filter((e) => !syntheticEventIds.has(e.id));
  expect(invalid.map((e) => `${e.type}: ${e.issues}`).join("\n"), "events whose body does not match GET /api/event-types").toBe("");
});
