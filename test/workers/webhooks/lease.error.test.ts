import { eq } from "drizzle-orm";
import { afterEach, describe, expect, it, vi } from "vitest";
import { events, webhookDeliveries } from "../../../src/db/schema/index.ts";
import { attemptDeliveries, LEASE_MS } from "../../../src/events/delivery.ts";
import { fanOut } from "../../../src/events/fanout.ts";
import { sendAttempt } from "../../../src/events/send-attempt.ts";
import { SendGate } from "../../../src/events/send-gate.ts";
import { newId } from "../../../src/platform/ids.ts";
import { accountShard, type Shard } from "../../../src/platform/shards.ts";
import { syntheticEventIds } from "../event-tap.ts";
import { configureInbox, createKey, env, newInbox, receivedAt, registerWebhook, waitForDeliveries } from "./support.ts";

/** A delivery to `webhookId` as the fan-out records it, holding a throttle slot due now; nothing queued. */
async function heldDelivery(shard: Shard, accountId: string, now: number): Promise<string> {
  const eventId = newId("evt");
  syntheticEventIds.add(eventId); // made-up data: not checked against the catalog
  const payload = JSON.stringify({ type: "message.sent", timestamp: new Date(now).toISOString(), data: { id: "msg_late" } });
  await shard.db.insert(events).values({ id: eventId, accountId, type: "message.sent", sessionId: null, payload, createdAt: now });
  const [id] = await fanOut(shard, [eventId]);
  await shard.db.update(webhookDeliveries).set({ slotAt: now, nextAttemptAt: now }).where(eq(webhookDeliveries.id, id!));
  return id!;
}

/**
 * A throttled endpoint's delivery held at a gate whose line gives it its turn at `turnAt(t0)`, the
 * attempt started (fake timers from here on) and waiting in that line.
 */
async function crowdedAttempt(turnAt: (t0: number) => number, waitForSlots: boolean) {
  const k = await createKey();
  const hook = await registerWebhook(k, { events: ["message.sent"], maxPerSecond: 1 });
  const shard = await accountShard(env, k.accountId);
  vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "Date"] });
  const t0 = Date.now();
  const id = await heldDelivery(shard, k.accountId, t0);
  const crowded = new SendGate(1, turnAt(t0), () => {});
  const first = attemptDeliveries(env, shard, [id], t0, waitForSlots, crowded);
  while (crowded.queued() === 0) await shard.db.select({ id: webhookDeliveries.id }).from(webhookDeliveries).where(eq(webhookDeliveries.id, id));
  return { hook, shard, id, first };
}

// The clock is driven (fake timers): the wait at the endpoint's gate outlasts the lease to the millisecond,
// as it does on a loaded machine, while D1 and the receiver are the real ones.
describe("webhook deliveries: a turn that comes after the lease", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("an attempt whose turn at the gate comes when its lease no longer covers it is not made: the invocation that took the delivery since sends it, once", async () => {
    // A gate whose line reaches past the lease: this delivery's turn comes LEASE_MS + 5 s on.
    const { hook, shard, id, first } = await crowdedAttempt((t0) => t0 + LEASE_MS + 4_000, true);

    // The lease lapses; another invocation (a re-enqueued message, the cron) takes the delivery and sends it.
    await vi.advanceTimersByTimeAsync(LEASE_MS + 1_000);
    const second = await attemptDeliveries(env, shard, [id], Date.now(), true, new SendGate(1, 0, () => {}));
    expect(second[0]).toMatchObject({ attempted: true, outcome: { status: "succeeded" } });

    // The first one's turn comes: too late for its lease, so no request goes out.
    await vi.advanceTimersByTimeAsync(5_000);
    const [late] = await first;
    vi.useRealTimers();
    expect((await receivedAt(hook.inbox)).map((r) => r.webhookId)).toHaveLength(1);
    expect(late).toMatchObject({ attempted: false, reason: "late" });
    const row = await shard.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.id, id)).get();
    expect(row).toMatchObject({ status: "succeeded", attempts: 1, leaseUntil: null });
  });

  it("a turn that comes late, the lease not yet taken by another, gives the lease back and queues the delivery again, which is then sent once", async () => {
    // The turn comes 55 s on: the lease has 5 s left, less than the attempt's timeout and its recording take.
    const { hook, shard, id, first } = await crowdedAttempt((t0) => t0 + LEASE_MS - 6_000, false);
    await vi.advanceTimersByTimeAsync(LEASE_MS - 4_000);
    expect((await first)[0]).toMatchObject({ attempted: false, reason: "late" });
    vi.useRealTimers();
    // Given back and queued again: the throttle queue's consumer sends it (its slot is past: at once).
    const got = await waitForDeliveries(hook.inbox, 1, 15_000);
    expect(got).toHaveLength(1);
    await new Promise((r) => setTimeout(r, 1_000)); // a stray would arrive now
    expect(await receivedAt(hook.inbox)).toHaveLength(1);
    const row = await shard.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.id, id)).get();
    expect(row).toMatchObject({ status: "succeeded", attempts: 1 });
  });
});

describe("webhook attempts: an answer that came is counted", () => {
  it("a 2xx whose body is still coming at the timeout is a success, not a timeout to send again", async () => {
    const box = newInbox();
    await configureInbox(box.name, { secrets: [], then: "slow-body", hangMs: 3_000 });
    const result = await sendAttempt({ url: box.url, secrets: ["whsec_dGVzdHNlY3JldHRlc3RzZWNyZXQ="], messageId: "msg_slow_body", body: "{}", timeoutMs: 500 });
    expect(result).toMatchObject({ statusCode: 200, error: null, responseBody: null });
    expect(result.durationMs).toBeLessThan(2_500);
  });
});
