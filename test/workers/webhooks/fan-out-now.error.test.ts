import { env } from "cloudflare:workers";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { events } from "../../../src/db/schema/index.ts";
import { FanOutNow } from "../../../src/events/fan-out-now.ts";
import type { EventRecord, EventsQueueMessage } from "../../../src/events/types.ts";
import { getDb } from "../../../src/db/client.ts";
import { accountShard, type Shard } from "../../../src/platform/shards.ts";
import { createKey } from "../helpers.ts";
import { recordOnly } from "./support.ts";

/** A queue that keeps what is sent to it. */
function keepingQueue() {
  const sent: EventsQueueMessage[] = [];
  const queue = {
    send: async (body: EventsQueueMessage) => void sent.push(body),
    sendBatch: async (msgs: Iterable<{ body: EventsQueueMessage }>) => void sent.push(...[...msgs].map((m) => m.body)),
  };
  return { sent, env: { ...env, EVENTS_QUEUE: queue as unknown as Queue } as Env };
}

/** Records recorded in the account's shard (made-up bodies: not checked against the catalog). */
async function records(shard: Shard, accountId: string, n: number): Promise<EventRecord[]> {
  const out: EventRecord[] = [];
  for (let i = 0; i < n; i++) {
    const id = await recordOnly(shard, accountId);
    const row = (await shard.db.select().from(events).where(eq(events.id, id)).get())!;
    out.push({ id, accountId, type: row.type as EventRecord["type"], sessionId: row.sessionId, payload: row.payload, createdAt: row.createdAt });
  }
  return out;
}

const idsQueued = (sent: EventsQueueMessage[]) => sent.flatMap((m) => (m.kind === "events" ? m.ids : [m.id]));

describe("webhooks: a session's own fan-out, when it cannot make it", () => {
  it("past its fan-outs in flight, a session's events take the queue at once, with their records", async () => {
    const k = await createKey("pro");
    const shard = await accountShard(env, k.accountId);
    const recs = await records(shard, k.accountId, 3);
    const q = keepingQueue();
    await new FanOutNow(q.env, {}, 0).run(shard, recs);
    expect(idsQueued(q.sent)).toEqual(recs.map((r) => r.id));
    expect(q.sent.flatMap((m) => (m.kind === "events" ? m.carried.map((c) => c.id) : []))).toEqual(recs.map((r) => r.id));
    // Not claimed here: the consumer finds them free.
    const rows = await Promise.all(recs.map((r) => shard.db.select().from(events).where(eq(events.id, r.id)).get()));
    expect(rows.map((r) => [r?.fanoutLeaseUntil ?? null, r?.fannedOutAt ?? null])).toEqual(recs.map(() => [null, null]));
  });

  it("a fan-out that fails (D1 down) puts its events on the queue instead of losing them", async () => {
    const k = await createKey("pro");
    const shard = await accountShard(env, k.accountId);
    const recs = await records(shard, k.accountId, 2);
    const down = {
      prepare: (q: string) => shard.d1.prepare(q),
      batch: () => Promise.reject(new Error("D1 is down")),
      exec: () => Promise.reject(new Error("D1 is down")),
    } as unknown as D1Database;
    const q = keepingQueue();
    await new FanOutNow(q.env).run({ index: shard.index, d1: down, db: getDb(down) }, recs);
    expect(idsQueued(q.sent)).toEqual(recs.map((r) => r.id));
  });
});
