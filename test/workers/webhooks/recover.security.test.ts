import { describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { getDb } from "../../../src/db/client.ts";
import { webhookDeliveries } from "../../../src/db/schema/index.ts";
import { newId } from "../../../src/platform/ids.ts";
import { api, configureInbox, createKey, deliveriesOf, env, registerWebhook } from "./support.ts";
import { failedDeliveries, recover, recoverOk } from "./recover.support.ts";
import { shardDb } from "../helpers.ts";

describe("webhooks: recover, security", () => {
  it("another account's webhook answers 404 like a missing one, and its failed deliveries stay failed", async () => {
    const owner = await createKey();
    const other = await createKey();
    const hook = await registerWebhook(owner, { events: ["*"] });
    const since = new Date().toISOString();
    await failedDeliveries(owner, hook, 1);
    await configureInbox(hook.inbox, { secrets: [hook.secret], then: 200 });
    const res = await recover(other, hook.id, { since });
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: { code: "not_found", message: expect.any(String) } });
    expect((await deliveriesOf(owner, hook.id)).map((d) => d.status)).toEqual(["failed"]);
    expect((await api(`/api/webhooks/${hook.id}/recover`, { method: "POST", json: { since } })).status).toBe(401);
  });

  it("a delivery row of another account never moves, even one naming this account's webhook", async () => {
    const owner = await createKey();
    const other = await createKey();
    const hook = await registerWebhook(owner, { events: ["*"] });
    const since = new Date().toISOString();
    const now = Date.now();
    const forged = newId("dlv", now);
    await (await shardDb(owner.accountId)).insert(webhookDeliveries).values({
      id: forged, accountId: other.accountId, webhookId: hook.id, eventId: newId("evt", now), eventType: "message.received",
      status: "failed", attempts: 4, nextAttemptAt: null, queuedAt: null, createdAt: now, updatedAt: now,
    });
    expect(await recoverOk(owner, hook.id, { since })).toEqual({ queued: 0, hasMore: false, since });
    const row = await (await shardDb(owner.accountId)).select().from(webhookDeliveries).where(eq(webhookDeliveries.id, forged)).get();
    expect(row!.status).toBe("failed");
  });
});
