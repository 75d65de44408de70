import { applyD1Migrations, env } from "cloudflare:test";
import { afterAll, expect } from "vitest";
import { invalidEvents } from "./event-tap.ts";

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
  expect(invalidEvents, "events whose body does not match GET /api/event-types").toEqual([]);
});
