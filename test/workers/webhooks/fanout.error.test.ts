import { createExecutionContext, getQueueResult, waitOnExecutionContext } from "cloudflare:test";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { events } from "../../../src/db/schema/index.ts";
import { handleEventsQueue } from "../../../src/events/consumers.ts";
import { shardAt } from "../../../src/platform/shards.ts";
import { createKey, env, eventBatch, recordOnly, registerWebhook, waitFor, waitForDeliveries } from "./support.ts";

const SHARD = 1;
const shard = () => shardAt(env, SHARD);

/** The shard's D1 with its batches failing after the first `ok` (D1 unavailable half-way through a fan-out). */
function failingBatchesAfter(ok: number): Env {
  const real = env.SHARD_1;
  let calls = 0;
  const d1 = new Proxy(real, {
    get(target, prop) {
      if (prop === "batch") {
        return async (statements: D1PreparedStatement[]) => {
          if (calls++ >= ok) throw new Error("D1 unavailable (test)");
          return target.batch(statements);
        };
      }
      const value = Reflect.get(target, prop) as unknown;
      return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
  return { ...env, SHARD_1: d1 } as Env;
}

describe("events consumer: attempts that cannot be recorded", () => {
  it("after the ack, attempts whose outcome fails to record put their event back on the queue: delivered again with its webhook-id, then fanned out", async () => {
    const k = await createKey("pro", { shard: SHARD });
    const hook = await registerWebhook(k, { events: ["message.sent"] });
    const id = await recordOnly(shard(), k.accountId);
    const batch = eventBatch(id, SHARD);
    const ctx = createExecutionContext();
    // The lease's batch goes through; the one recording the attempt's outcome does not.
    await handleEventsQueue(batch, failingBatchesAfter(1), ctx);
    await waitOnExecutionContext(ctx);
    expect((await getQueueResult(batch, ctx)).explicitAcks).toEqual([`m-${id}`]);
    const [first] = await waitForDeliveries(hook.inbox, 1);
    expect(first!.webhookId).toBe(id);
    // Back on the real queue 2 s later, the event's next fan-out (a working D1) delivers it again and records it.
    const got = await waitForDeliveries(hook.inbox, 2, 15_000);
    expect(got.map((g) => g.webhookId)).toEqual([id, id]);
    expect(got[1]!.receivedAt - got[0]!.receivedAt).toBeGreaterThanOrEqual(1_500);
    const row = await waitFor(async () => {
      const [e] = await shard().db.select().from(events).where(eq(events.id, id));
      return e?.fannedOutAt != null && e;
    });
    expect(row).toMatchObject({ fanoutLeaseUntil: null });
  });
});
