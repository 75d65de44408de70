import { createExecutionContext, createMessageBatch, getQueueResult, waitOnExecutionContext } from "cloudflare:test";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { webhookDeliveries } from "../../../src/db/schema/index.ts";
import { handleDeliveryQueue, PLACE_HOLD_MS } from "../../../src/events/consumers.ts";
import { fanOut } from "../../../src/events/fanout.ts";
import type { DeliveryQueueMessage } from "../../../src/events/types.ts";
import { shardAt } from "../../../src/platform/shards.ts";
import { createKey, env, recordOnly, registerWebhook, waitFor, waitForDeliveries } from "./support.ts";

const SHARD = 1;
const shard = () => shardAt(env, SHARD);

/** A delivery-queue batch of one message (`d-<deliveryId>`), as the fan-out and the cron send them. */
const deliveryBatch = (deliveryId: string) =>
  createMessageBatch<DeliveryQueueMessage>("texmsg-webhook-deliveries", [{ id: `d-${deliveryId}`, timestamp: new Date(), attempts: 1, body: { kind: "delivery", id: deliveryId, shard: SHARD } }]);

describe("delivery queue consumer: accounts do not wait for each other's receivers", () => {
  it("a batch whose receiver is slow is acked after PLACE_HOLD_MS and goes on in the background; the next batch (another account's) is delivered meanwhile", async () => {
    const slow = await createKey("pro", { shard: SHARD });
    const fast = await createKey("pro", { shard: SHARD });
    // The receiver answers after 4 s, inside a 6 s timeout: the attempt takes 4 s and succeeds.
    const slowEnv = { ...env, WEBHOOK_TIMEOUT_MS: "6000" } as Env;
    const hung = await registerWebhook(slow, { events: ["message.sent"] }, { then: "timeout", hangMs: 4_000 });
    const quick = await registerWebhook(fast, { events: ["message.sent"] });
    // Deliveries waiting for an attempt (as a retry does), each put on the delivery queue by the test.
    const [slowDelivery] = await fanOut(shard(), [await recordOnly(shard(), slow.accountId)]);
    const [fastDelivery] = await fanOut(shard(), [await recordOnly(shard(), fast.accountId)]);

    const slowCtx = createExecutionContext();
    const slowBatch = deliveryBatch(slowDelivery!);
    await handleDeliveryQueue(slowBatch, slowEnv, slowCtx);
    const slowDone = waitOnExecutionContext(slowCtx).then(() => Date.now());

    const fastCtx = createExecutionContext();
    await handleDeliveryQueue(deliveryBatch(fastDelivery!), slowEnv, fastCtx);
    const [got] = await waitForDeliveries(quick.inbox, 1);
    // Awaited in the handler, the slow attempt would have ended (4 s) before the next batch began.
    expect(got!.receivedAt).toBeLessThan(await slowDone);
    expect(PLACE_HOLD_MS).toBeLessThan(2_000);
    await waitOnExecutionContext(fastCtx);
    expect((await getQueueResult(slowBatch, slowCtx)).explicitAcks).toEqual([`d-${slowDelivery}`]);

    // The slow attempt is recorded as the success it is, once.
    const row = await waitFor(async () => {
      const r = await shard().db.select().from(webhookDeliveries).where(eq(webhookDeliveries.id, slowDelivery!)).get();
      return r?.status === "succeeded" && r;
    });
    expect(row).toMatchObject({ webhookId: hung.id, attempts: 1 });
    expect(await waitForDeliveries(hung.inbox, 1)).toHaveLength(1);
  }, 30_000);
});
