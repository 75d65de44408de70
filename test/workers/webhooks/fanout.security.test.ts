import { createExecutionContext, getQueueResult, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { handleEventsQueue, PLACE_HOLD_MS } from "../../../src/events/consumers.ts";
import { shardAt } from "../../../src/platform/shards.ts";
import { createKey, deliveriesOf, env, eventBatch, recordOnly, registerWebhook, waitFor, waitForDeliveries } from "./support.ts";

const SHARD = 1;
const shard = () => shardAt(env, SHARD);

describe("events consumer: accounts do not wait for each other's receivers", () => {
  it("a batch whose receiver hangs is acked at once and the next batch (another account's) is delivered while that attempt still waits", async () => {
    const slow = await createKey("pro", { shard: SHARD });
    const fast = await createKey("pro", { shard: SHARD });
    // Hangs past the webhook timeout (1.5 s in tests): the attempt ends as a timeout.
    const hung = await registerWebhook(slow, { events: ["message.sent"] }, { script: ["timeout"], hangMs: 5_000 });
    const quick = await registerWebhook(fast, { events: ["message.sent"] });
    const slowEvent = await recordOnly(shard(), slow.accountId);
    const fastEvent = await recordOnly(shard(), fast.accountId);

    const slowCtx = createExecutionContext();
    const slowBatch = eventBatch(slowEvent, SHARD);
    await handleEventsQueue(slowBatch, env, slowCtx);
    const slowDone = waitOnExecutionContext(slowCtx).then(() => Date.now());

    const fastCtx = createExecutionContext();
    await handleEventsQueue(eventBatch(fastEvent, SHARD), env, fastCtx);
    const [got] = await waitForDeliveries(quick.inbox, 1);
    expect(got!.webhookId).toBe(fastEvent);
    // Awaited in the handler, the hung attempt would have ended (timed out) before the next batch began.
    expect(got!.receivedAt).toBeLessThan(await slowDone);
    await waitOnExecutionContext(fastCtx);
    // (getQueueResult waits for the context's background work too.)
    expect((await getQueueResult(slowBatch, slowCtx)).explicitAcks).toEqual([`m-${slowEvent}`]);

    // The hung attempt is recorded as the failure it is, to be retried.
    const [d] = await waitFor(async () => {
      const logs = await deliveriesOf(slow, hung.id);
      return logs.length > 0 && logs;
    });
    expect(d).toMatchObject({ eventId: slowEvent, status: "pending", attemptCount: 1 });
    expect(d!.attempts[0]!.error).toMatch(/timed out/);
  });

  it("an account whose hung receiver holds every place of the consumer keeps another account's webhook waiting no longer than a place is held", async () => {
    const slow = await createKey("pro", { shard: SHARD });
    const fast = await createKey("pro", { shard: SHARD });
    // The receiver answers after 4 s, inside a 6 s timeout: each of its attempts takes 4 s.
    const slowEnv = { ...env, WEBHOOK_TIMEOUT_MS: "6000" } as Env;
    await registerWebhook(slow, { events: ["message.sent"] }, { then: "timeout", hangMs: 4_000 });
    const quick = await registerWebhook(fast, { events: ["message.sent"] });
    // The consumer's four places, each taken by a fan-out of the slow account.
    const slowCtxs = [];
    for (let i = 0; i < 4; i++) {
      const ctx = createExecutionContext();
      await handleEventsQueue(eventBatch(await recordOnly(shard(), slow.accountId), SHARD), slowEnv, ctx);
      slowCtxs.push(ctx);
    }
    const firstSlowDone = Promise.race(slowCtxs.map((c) => waitOnExecutionContext(c))).then(() => Date.now());
    const fastEvent = await recordOnly(shard(), fast.accountId);
    const fastCtx = createExecutionContext();
    await handleEventsQueue(eventBatch(fastEvent, SHARD), slowEnv, fastCtx);
    const [got] = await waitForDeliveries(quick.inbox, 1);
    expect(got!.webhookId).toBe(fastEvent);
    // Delivered while every slow attempt still waits: it waited for a place PLACE_HOLD_MS at most, not 4 s.
    expect(got!.receivedAt).toBeLessThan(await firstSlowDone);
    expect(PLACE_HOLD_MS).toBeLessThan(2_000);
    for (const c of [...slowCtxs, fastCtx]) await waitOnExecutionContext(c);
  }, 60_000);
});
