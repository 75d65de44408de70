import { describe, expect, it } from "vitest";
import { hardStopCheck } from "../../scripts/hard-stop.ts";

describe("a power cut between 201s and their flush (scripts/hard-stop.ts)", () => {
  it("after SIGKILL of the whole stack and a restart on the same state, every acknowledged send (and bulk message) is in D1 once and each of its events (sent, delivered, read) reaches the webhook under one webhook-id", async () => {
    // `npm run dev` offers the scheduled trigger, so the cron runs at once with a clock past the age at which
    // events never enqueued count as stranded; the generous wait is for a loaded machine's restart and queues.
    const r = await hardStopCheck({ sends: 100, bulk: 50, waitMs: 10 * 60_000, log: (line) => console.log(`hard stop: ${line}`) });
    expect(r.virtualCron).toBe(true);
    expect(r).toMatchObject({ acknowledged: 150, bulkAcknowledged: 50 });
    expect(r).toMatchObject({ inD1: 150, twiceInD1: 0, sentDelivered: 150, mixedWebhookIds: 0, receiptsDelivered: 150, repeatedSequences: 0 });
  }, 20 * 60_000);
});
