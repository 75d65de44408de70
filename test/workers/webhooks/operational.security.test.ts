import { describe, expect, it } from "vitest";
import { and, eq } from "drizzle-orm";
import { getDb } from "../../../src/db/client.ts";
import { events } from "../../../src/db/schema/index.ts";
import { createKey, emitEvent, env, receivedAt, registerWebhook, waitFor } from "./support.ts";
import { shardDb } from "../helpers.ts";

describe("operational events: no self-delivery, no loops", () => {
  it("two endpoints failing everything hear of each other's given-up delivery once, never of their own, and nothing further", async () => {
    const k = await createKey();
    const a = await registerWebhook(k, { events: ["*"] }, { then: 500 });
    const b = await registerWebhook(k, { events: ["*"] }, { then: 500 });
    const [ev] = await emitEvent({ accountId: k.accountId });
    const exhausted = async () => (await shardDb(k.accountId)).select().from(events).where(and(eq(events.accountId, k.accountId), eq(events.type, "webhook.delivery_exhausted"))).all();
    const announcements = await waitFor(async () => {
      const rows = await exhausted();
      return rows.length >= 2 ? rows : undefined;
    }, 20_000, "two exhaustion events");
    const about = new Map(announcements.map((r) => [(JSON.parse(r.payload) as { data: { webhookId: string } }).data.webhookId, r.id]));
    expect(new Set(about.keys())).toEqual(new Set([a.id, b.id]));
    // each endpoint gets the other's announcement, retried to exhaustion too (schedule 1,1,1: 4 attempts)
    await waitFor(async () => (await receivedAt(a.inbox)).filter((r) => r.webhookId === about.get(b.id)).length === 4, 20_000, "a hears b");
    await waitFor(async () => (await receivedAt(b.inbox)).filter((r) => r.webhookId === about.get(a.id)).length === 4, 20_000, "b hears a");
    await new Promise((r) => setTimeout(r, 2500));
    expect((await exhausted()).length).toBe(2);
    expect(new Set((await receivedAt(a.inbox)).map((r) => r.webhookId))).toEqual(new Set([ev!.id, about.get(b.id)]));
    expect(new Set((await receivedAt(b.inbox)).map((r) => r.webhookId))).toEqual(new Set([ev!.id, about.get(a.id)]));
  });
});
