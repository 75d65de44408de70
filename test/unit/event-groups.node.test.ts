// The events queue's messages: a session's recorded events go in groups (src/events/queue-groups.ts),
// each message and each sendBatch within the queue's size limits, whatever the records' size and script.
import { serialize } from "node:v8";
import { describe, expect, it } from "vitest";
import { queueGroups } from "../../src/events/queue-groups.ts";
import type { EventRecord, EventsQueueMessage } from "../../src/events/types.ts";

const MESSAGE_LIMIT = 128 * 1024;
const BATCH_LIMIT = 256 * 1024;

function record(i: number, payload: string): EventRecord {
  return { id: `evt_${String(i).padStart(6, "0")}`, accountId: "acc_1", type: "message.sent", sessionId: "ses_1", payload, createdAt: 1 };
}

/** The messages as sent, a list per sendBatch. */
const sent = async (records: EventRecord[]): Promise<{ body: EventsQueueMessage }[][]> => queueGroups(1, records).map((batch) => batch.map((body) => ({ body })));

const bodies = (calls: { body: EventsQueueMessage }[][]) => calls.flat().map((m) => m.body as Extract<EventsQueueMessage, { kind: "events" }>);

describe("events queue groups", () => {
  it("a session's events go a hundred to a message, in order, with their records", async () => {
    const records = Array.from({ length: 250 }, (_, i) => record(i, `{"n":${i}}`));
    const calls = await sent(records);
    const groups = bodies(calls);
    expect(groups.map((g) => g.ids.length)).toEqual([100, 100, 50]);
    expect(groups.flatMap((g) => g.ids)).toEqual(records.map((r) => r.id));
    expect(groups.flatMap((g) => g.carried)).toEqual(records);
    expect(groups.every((g) => g.kind === "events" && g.shard === 1)).toBe(true);
    expect(calls.length).toBe(1);
  });

  it("messages and batches stay within the queue's limits, in one-byte and two-byte scripts", async () => {
    for (const unit of ["a", "é", "語", "😀"]) {
      // Records just under the carried maximum, and medium ones.
      const records = Array.from({ length: 60 }, (_, i) => record(i, unit.repeat(i % 3 === 0 ? 20_000 : 3_000)));
      const calls = await sent(records);
      for (const call of calls) {
        expect(call.length).toBeLessThanOrEqual(100);
        const sizes = call.map((m) => serialize(m.body).length);
        for (const size of sizes) expect(size).toBeLessThanOrEqual(MESSAGE_LIMIT);
        expect(sizes.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(BATCH_LIMIT);
      }
      expect(bodies(calls).flatMap((g) => g.ids)).toEqual(records.map((r) => r.id));
    }
  });

  it("a record too large to carry goes by id, in its place", async () => {
    const records = [record(0, "{}"), record(1, "x".repeat(60_000)), record(2, "{}")];
    const groups = bodies(await sent(records));
    expect(groups.flatMap((g) => g.ids)).toEqual(records.map((r) => r.id));
    expect(groups.flatMap((g) => g.carried).map((r) => r.id)).toEqual([records[0]!.id, records[2]!.id]);
  });
});
