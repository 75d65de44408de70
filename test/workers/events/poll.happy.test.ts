import { describe, expect, it } from "vitest";
import { POLL_SETTLE_MS } from "../../../src/events/config.ts";
import { createKey } from "../helpers.ts";
import { emitEvent } from "../webhooks/support.ts";
import { byId, poll, pollUntil } from "./poll.support.ts";
import { openStream } from "./stream.support.ts";

describe("event poll: happy paths", () => {
  it("without a cursor starts from now; then answers each event once, in order, as the stream's frame, and `next` resumes", async () => {
    const k = await createKey("pro");
    const before = await emitEvent({ accountId: k.accountId, type: "contact.created", data: { id: "ct_before" } });
    const start = await poll(k);
    expect(start.data).toEqual([]);
    expect(start.next).toMatch(/^evt_[0-9a-z]{21}$/);
    expect(start.next > before[0]!.id).toBe(true);

    const emitted = byId(await emitEvent([1, 2, 3].map((n) => ({ accountId: k.accountId, type: "message.received" as const, data: { id: `msg_${n}`, text: `n${n}` } }))));
    const { events, next } = await pollUntil(k, start.next, 3);
    expect(events.map((e) => e.id)).toEqual(emitted.map((e) => e.id));
    expect(events[0]).toEqual({ id: emitted[0]!.id, type: "message.received", timestamp: emitted[0]!.timestamp, data: emitted[0]!.data });
    expect(next).toBe(emitted[2]!.id);

    // Nothing new: the same cursor back.
    expect(await poll(k, `?after=${next}`)).toEqual({ data: [], next, hasMore: false });
  });

  it("pages with limit and hasMore; filters by type and session like the stream", async () => {
    const k = await createKey("pro");
    const start = (await poll(k)).next;
    const emitted = [];
    // One at a time, a few ms apart: ids order them as emitted.
    for (const e of [
      { accountId: k.accountId, type: "message.received" as const, sessionId: "ses_a", data: { n: 1 } },
      { accountId: k.accountId, type: "message.read" as const, sessionId: "ses_a", data: { n: 2 } },
      { accountId: k.accountId, type: "message.received" as const, sessionId: "ses_b", data: { n: 3 } },
      { accountId: k.accountId, type: "contact.created" as const, data: { n: 4 } },
      { accountId: k.accountId, type: "message.received" as const, sessionId: "ses_a", data: { n: 5 } },
    ]) {
      emitted.push(...(await emitEvent(e)));
      await new Promise((r) => setTimeout(r, 3));
    }
    await pollUntil(k, start, 5);
    const p1 = await poll(k, `?after=${start}&limit=2`);
    expect(p1.data.map((e) => e.data.n)).toEqual([1, 2]);
    expect(p1.hasMore).toBe(true);
    const p2 = await poll(k, `?after=${p1.next}&limit=2`);
    expect(p2.data.map((e) => e.data.n)).toEqual([3, 4]);
    const p3 = await poll(k, `?after=${p2.next}&limit=2`);
    expect(p3.data.map((e) => e.data.n)).toEqual([5]);
    expect(p3).toMatchObject({ hasMore: false, next: emitted[4]!.id });

    const filtered = await poll(k, `?after=${start}&types=message.received&sessionId=ses_a`);
    expect(filtered.data.map((e) => e.data.n)).toEqual([1, 5]);
  });

  it("the cursor is the stream's: a polled id resumes the WebSocket, and the stream replays what the poll answers", async () => {
    const k = await createKey("pro");
    const start = (await poll(k)).next;
    const emitted = byId(await emitEvent([1, 2, 3].map((n) => ({ accountId: k.accountId, type: "contact.created" as const, data: { n } }))));
    const polled = await pollUntil(k, start, 3);
    const stream = await openStream(`?after=${polled.events[0]!.id}`, { key: k.key });
    await stream.next((e) => e.id === emitted[2]!.id);
    expect(stream.received.map((e) => e.id)).toEqual(emitted.slice(1).map((e) => e.id));
    expect(stream.received).toEqual(polled.events.slice(1));
    stream.ws.close(1000);
  });

  it("long poll: an empty answer waits for an event (recorded, then settled) and returns it; with none, it ends after `wait`", async () => {
    const k = await createKey("pro");
    const start = (await poll(k)).next;
    const t0 = Date.now();
    const empty = await poll(k, `?after=${start}&wait=1`);
    expect(empty).toEqual({ data: [], next: start, hasMore: false });
    expect(Date.now() - t0).toBeGreaterThanOrEqual(900);

    const waiting = poll(k, `?after=${start}&wait=15`);
    await new Promise((r) => setTimeout(r, 500));
    const [ev] = await emitEvent({ accountId: k.accountId, type: "contact.created", data: { id: "ct_1" } });
    const t1 = Date.now();
    const got = await waiting;
    expect(got.data.map((e) => e.id)).toEqual([ev!.id]);
    // Answered once the event settled, within about a poll interval of that.
    expect(Date.now() - t1).toBeLessThan(POLL_SETTLE_MS + 3_000);
  });
});
