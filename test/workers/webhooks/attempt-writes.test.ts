import { describe, expect, it } from "vitest";
import { getDb } from "../../../src/db/client.ts";
import { attemptClaimed } from "../../../src/events/delivery.ts";
import { prepareEvents } from "../../../src/events/emit.ts";
import { fanOutAndClaim } from "../../../src/events/fanout.ts";
import { createKey, deliveriesOf, env, receivedAt, registerWebhook } from "./support.ts";
import { accountShard, type Shard } from "../../../src/platform/shards.ts";

/** The account's shard with its D1 counting the statements of its batches (all attemptClaimed writes with). */
function countingShard(shard: Shard): { shard: Shard; statements: () => number } {
  let n = 0;
  const db = shard.d1;
  const counted = {
    prepare: (query: string) => db.prepare(query),
    batch: (statements: D1PreparedStatement[]) => {
      n += statements.length;
      return db.batch(statements);
    },
  } as unknown as D1Database;
  return { shard: { index: shard.index, d1: counted, db: getDb(counted) }, statements: () => n };
}

describe("webhook deliveries: successful attempts are recorded in a few statements", () => {
  it("20 first attempts answered 2xx: every delivery succeeded, its outcome on its own row (no attempt rows), written in 1 statement (40 when each attempt had its own two)", async () => {
    const key = await createKey();
    const hook = await registerWebhook(key);
    // Recorded, never enqueued: this test alone fans them out and attempts them.
    const inputs = Array.from({ length: 20 }, (_, i) => ({ type: "message.sent" as const, accountId: key.accountId, sessionId: null, data: { id: `msg_w${i}` } }));
    const shard = await accountShard(env, key.accountId);
    const prepared = prepareEvents(env, shard, inputs);
    await shard.db.batch(prepared.statements as [(typeof prepared.statements)[number]]);
    const fanned = await fanOutAndClaim(shard, prepared.events.map((e) => e.id), 50);
    expect(fanned.claimed).toHaveLength(20);

    const counting = countingShard(shard);
    const reports = await attemptClaimed(env, counting.shard, fanned.claimed, fanned.hooks, fanned.payloads, Date.now());
    expect([...reports.values()].every((r) => r.attempted && r.outcome.status === "succeeded")).toBe(true);
    expect(counting.statements()).toBe(1); // one UPDATE of the deliveries, their outcomes as one JSON parameter

    expect(new Set((await receivedAt(hook.inbox)).map((r) => r.webhookId)).size).toBe(20);
    const log = await deliveriesOf(key, hook.id);
    expect(log).toHaveLength(20);
    for (const d of log) {
      expect(d).toMatchObject({ status: "succeeded", attemptCount: 1, lastStatusCode: 200, lastError: null, nextAttemptAt: null });
      expect(d.attempts).toEqual([expect.objectContaining({ attempt: 1, statusCode: 200, error: null, nextAttemptAt: null, responseBody: null })]);
      expect(d.attempts[0]!.durationMs).toBeGreaterThanOrEqual(0);
    }
    const kept = await shard.d1.prepare("SELECT count(*) AS n FROM webhook_attempts WHERE account_id = ?").bind(key.accountId).first<{ n: number }>();
    expect(kept?.n).toBe(0);
  });
});
