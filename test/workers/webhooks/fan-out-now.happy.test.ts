import { env } from "cloudflare:workers";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { events } from "../../../src/db/schema/index.ts";
import { accountShard } from "../../../src/platform/shards.ts";
import { queuedEventIds } from "../event-tap.ts";
import { createKey } from "../helpers.ts";
import { json, sandboxSession, type MessageJson } from "../messaging/support.ts";
import { api, receivedAt, registerWebhook, waitForDeliveries } from "./support.ts";

describe("webhooks: a session fans its inbound messages out itself", () => {
  it("an inbound message's webhook is attempted by its session, not through the events queue", async () => {
    const k = await createKey("pro");
    const s = await sandboxSession(k.key);
    const hook = await registerWebhook(k, { events: ["message.received"] });
    const res = await api(`/api/sessions/${s.id}/sandbox/inbound`, { method: "POST", key: k.key, json: { from: "+15557770101", text: "straight there" } });
    expect(res.status).toBe(201);
    const m = await json<MessageJson>(res);
    const [got] = await waitForDeliveries(hook.inbox, 1);
    const body = JSON.parse(got!.body) as { type: string; data: { id: string } };
    expect(body).toMatchObject({ type: "message.received", data: { id: m.id } });
    expect(got!.verified).toBe(true);
    // Its event was fanned out (marked, with the success folded on) and never named on the queue.
    const row = await (await accountShard(env, k.accountId)).db.select().from(events).where(eq(events.id, got!.webhookId)).get();
    expect(row?.fannedOutAt).not.toBeNull();
    expect(queuedEventIds.has(got!.webhookId)).toBe(false);
    expect(await receivedAt(hook.inbox)).toHaveLength(1);
  });

});
