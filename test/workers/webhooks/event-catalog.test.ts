import Ajv2020 from "ajv/dist/2020.js";
import { env } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { emit } from "../../../src/events/emit.ts";
import { EVENT_TYPES, TEST_EVENT_TYPE } from "../../../src/events/types.ts";
import { api, createKey, errorOf } from "../helpers.ts";
import { invalidEvents, seenEvents } from "../event-tap.ts";

interface CatalogEntry {
  type: string;
  description: string;
  schema: Record<string, unknown>;
  example: { type: string; timestamp: string; data: Record<string, unknown> };
}

async function catalog(): Promise<CatalogEntry[]> {
  const { key } = await createKey();
  const res = await api("/api/event-types", { key });
  expect(res.status).toBe(200);
  return ((await res.json()) as { data: CatalogEntry[] }).data;
}

describe("GET /api/event-types: the event catalog", () => {
  it("lists every event type once, each with a description, a JSON Schema and an example its schema accepts", async () => {
    const entries = await catalog();
    expect(entries.map((e) => e.type).sort()).toEqual([...EVENT_TYPES, TEST_EVENT_TYPE].sort());
    const ajv = new Ajv2020({ strict: false });
    for (const e of entries) {
      expect(e.description.length, e.type).toBeGreaterThan(10);
      expect(e.example.type).toBe(e.type);
      const valid = ajv.validate(e.schema, e.example);
      expect(valid, `${e.type}: ${JSON.stringify(ajv.errors)}`).toBe(true);
      // the schema says something: a body of another type, or without data, is refused
      expect(ajv.validate(e.schema, { ...e.example, type: "not.a.type" }), e.type).toBe(false);
      expect(ajv.validate(e.schema, { type: e.type, timestamp: e.example.timestamp }), e.type).toBe(false);
    }
  });

  it("message events carry the Message resource: a body missing its status is refused", async () => {
    const read = (await catalog()).find((e) => e.type === "message.read")!;
    const { status: _status, ...data } = read.example.data;
    const ajv = new Ajv2020({ strict: false });
    expect(ajv.validate(read.schema, { ...read.example, data })).toBe(false);
  });

  it("is the same as the OpenAPI document's webhooks (one source)", async () => {
    const doc = (await (await api("/openapi.json")).json()) as { webhooks?: Record<string, { post: { requestBody: { content: { "application/json": { schema: unknown } } } } }> };
    const entries = await catalog();
    expect(Object.keys(doc.webhooks ?? {}).sort()).toEqual(entries.map((e) => e.type).sort());
  });

  it("needs an API key like the rest of /api", async () => {
    const res = await api("/api/event-types");
    expect(res.status).toBe(401);
    expect((await errorOf(res)).code).toBe("unauthorized");
  });

  it("every event the tests produce is checked against it: one that does not match is caught (test/workers/setup.ts)", async () => {
    const { accountId } = await createKey();
    await emit(env, { type: "contact.created", accountId, data: { id: "con_x", phone: 42 } });
    await vi.waitFor(() => expect(invalidEvents.some((e) => e.accountId === accountId && e.type === "contact.created")).toBe(true), { timeout: 10_000, interval: 50 });
    // caught: taken back out, so this file's closing check sees only real events
    invalidEvents.splice(invalidEvents.findIndex((e) => e.accountId === accountId), 1);
    expect(seenEvents.some((e) => e.accountId === accountId)).toBe(true);
  });
});
