import { describe, expect, it } from "vitest";
import { hardStopCheck } from "../../scripts/hard-stop.ts";

describe("a power cut between 201s and their flush (scripts/hard-stop.ts)", () => {
  it("after SIGKILL of the whole stack and a restart on the same state, every acknowledged send is in D1 once and its message.sent reaches the webhook under one webhook-id", async () => {
    // The restart and the cron's finding of events never enqueued (2 min old) take minutes on a loaded machine.
    const r = await hardStopCheck({ sends: 100, waitMs: 10 * 60_000, log: (line) => console.log(`hard stop: ${line}`) });
    expect(r.acknowledged).toBe(100);
    expect(r).toMatchObject({ inD1: 100, twiceInD1: 0, sentDelivered: 100, mixedWebhookIds: 0 });
  }, 20 * 60_000);
});
