import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { webhookDeliveries } from "../../../src/db/schema/index.ts";
import { onCronEvents } from "../../../src/events/cron.ts";
import { accountShard } from "../../../src/platform/shards.ts";
import { observedRate } from "../../support/throttle-rate.ts";
import { api, createKey, deliveriesOf, emitEvent, receivedAt, registerWebhook, waitFor, waitForDeliveries } from "./support.ts";

const BURST = 200;
const RATE = 10;

/** Every delivery of a webhook, all pages (100 a page). */
async function allDeliveries(k: Awaited<ReturnType<typeof createKey>>, webhookId: string) {
  const res = await api(`/api/webhooks/${webhookId}/deliveries?limit=100`, { key: k.key });
  const out = ((await res.json()) as { data: { status: string; attemptCount: number }[]; nextCursor: string | null });
  let page = out;
  const rows = [...page.data];
  while (page.nextCursor) {
    page = (await (await api(`/api/webhooks/${webhookId}/deliveries?limit=100&cursor=${page.nextCursor}`, { key: k.key })).json()) as typeof out;
    rows.push(...page.data);
  }
  return rows;
}

describe("webhook throttle: happy path", () => {
  it(`holds a ${BURST}-event burst to ${RATE}/s within 10 %, nothing lost, no duplicates, waits not counted as attempts; an unthrottled endpoint is not held back`, { timeout: 90_000 }, async () => {
    const k = await createKey();
    const slow = await registerWebhook(k, { events: ["message.received"], maxPerSecond: RATE });
    const fast = await registerWebhook(k, { events: ["message.received"] });
    expect(slow).toMatchObject({ maxPerSecond: RATE });
    expect(fast).toMatchObject({ maxPerSecond: null });

    // Two bursts at once: separate events-queue batches, so consumer invocations ask the throttle concurrently.
    const started = Date.now();
    const emitted = (
      await Promise.all([0, 1].map((half) => emitEvent(Array.from({ length: BURST / 2 }, (_, i) => ({ accountId: k.accountId, data: { n: half * 1000 + i } })))))
    ).flat();

    const fastGot = await waitForDeliveries(fast.inbox, BURST, 30_000);
    const fastDone = Math.max(...fastGot.map((r) => r.receivedAt)) - started;
    const got = await waitForDeliveries(slow.inbox, BURST, 40_000);
    await new Promise((r) => setTimeout(r, 1500)); // strays would arrive now
    const all = await receivedAt(slow.inbox);

    expect(all).toHaveLength(BURST);
    expect(new Set(all.map((r) => r.webhookId))).toEqual(new Set(emitted.map((e) => e.id)));
    expect(all.every((r) => r.verified && r.answered === 200)).toBe(true);
    const seen = observedRate(got.map((r) => r.receivedAt));
    expect(seen.perSecond).toBeGreaterThan(RATE * 0.9);
    expect(seen.perSecond).toBeLessThan(RATE * 1.1);
    // Spread over the span, not let through at once. The unthrottled endpoint's burst floods the same
    // receiver meanwhile (it then stamps arrivals in bunches): the test below judges each second alone.
    expect(seen.maxInOneSecond).toBeLessThanOrEqual(RATE * 3);
    // The unthrottled endpoint got the whole burst long before the throttled one could.
    expect(fastDone).toBeLessThan(seen.spanMs / 2);

    const log = await waitFor(async () => {
      const rows = await allDeliveries(k, slow.id);
      return rows.length === BURST && rows.every((d) => d.status === "succeeded") ? rows : undefined;
    }, 10_000, "all deliveries succeeded");
    expect(log.every((d) => d.attemptCount === 1)).toBe(true);
  });

  // The exact promise (no sliding second over maxPerSecond + 10 %) is judged by bench:webhooks and, at its
  // source, by the gate's spacing test below: arrival times stamped by a receiver in this busy process
  // bunch whenever its event loop stalls, so here a second may hold up to twice the rate.
  it("a burst to a throttled endpoint holds its rate, no second over twice maxPerSecond, none lost, none twice, in slot order", { timeout: 60_000 }, async () => {
    const rate = 20;
    const burst = 240;
    const k = await createKey();
    const hook = await registerWebhook(k, { events: ["message.received"], maxPerSecond: rate });
    // Four bursts at once: concurrent fan-outs ask the throttle together, and its alarms' batches follow each other closely.
    const emitted = (
      await Promise.all([0, 1, 2, 3].map((q) => emitEvent(Array.from({ length: burst / 4 }, (_, i) => ({ accountId: k.accountId, data: { n: q * 1000 + i } })))))
    ).flat();
    await waitForDeliveries(hook.inbox, burst, 40_000);
    await new Promise((r) => setTimeout(r, 1500)); // strays would arrive now
    const got = (await receivedAt(hook.inbox)).sort((a, b) => a.receivedAt - b.receivedAt);

    expect(got).toHaveLength(burst);
    expect(new Set(got.map((r) => r.webhookId))).toEqual(new Set(emitted.map((e) => e.id)));
    const seen = observedRate(got.map((r) => r.receivedAt));
    expect(seen.maxInOneSecond, JSON.stringify(seen)).toBeLessThanOrEqual(rate * 2);
    // A loaded machine fires the gate's timers late and the rate sags (the bench judges it within 10 %); an
    // endpoint left unthrottled or stalled would be far outside either bound.
    expect(seen.perSecond, JSON.stringify(seen)).toBeGreaterThan(rate * 0.6);

    // Order: they arrived in the order of the slots the throttle handed out (a slot-less one went at once, first).
    const rows = await (await accountShard(env, k.accountId)).db
      .select({ eventId: webhookDeliveries.eventId, slotAt: webhookDeliveries.slotAt })
      .from(webhookDeliveries)
      .where(eq(webhookDeliveries.webhookId, hook.id));
    const slotOf = new Map(rows.map((r) => [r.eventId, r.slotAt ?? -Infinity]));
    const slots = got.map((r) => slotOf.get(r.webhookId)!);
    const outOfOrder = slots.filter((s, i) => i > 0 && s < slots[i - 1]!).length;
    expect(outOfOrder).toBe(0);
  });

  it("a throttled endpoint that fails is retried on the schedule, each attempt counted once", async () => {
    const k = await createKey();
    const hook = await registerWebhook(k, { events: ["message.received"], maxPerSecond: 5 }, { script: [500, 500], then: 200 });
    const emitted = await emitEvent(Array.from({ length: 4 }, (_, i) => ({ accountId: k.accountId, data: { n: i } })));
    const log = await waitFor(async () => {
      const rows = await deliveriesOf(k, hook.id);
      return rows.length === 4 && rows.every((d) => d.status === "succeeded") ? rows : undefined;
    }, 20_000, "all delivered");
    expect(log.map((d) => d.eventId).sort()).toEqual(emitted.map((e) => e.id).sort());
    // Two first attempts failed and were retried once each; throttle waits added none.
    expect(log.map((d) => d.attemptCount).reduce((a, b) => a + b, 0)).toBe(6);
    const got = await receivedAt(hook.inbox);
    expect(got).toHaveLength(6);
    expect(observedRate(got.map((r) => r.receivedAt)).maxInOneSecond).toBeLessThanOrEqual(6);
  });

  it("shows maxPerSecond in views, changes it and removes it; waiting deliveries then go at the new rate", async () => {
    const k = await createKey();
    const hook = await registerWebhook(k, { events: ["message.received"], maxPerSecond: 1 });
    expect((await (await api(`/api/webhooks/${hook.id}`, { key: k.key })).json()) as object).toMatchObject({ maxPerSecond: 1 });
    const list = (await (await api("/api/webhooks", { key: k.key })).json()) as { data: { id: string; maxPerSecond: number | null }[] };
    expect(list.data.find((w) => w.id === hook.id)?.maxPerSecond).toBe(1);

    // 20 events at 1/s would take 20 s; at 1,000/s they are all there at once.
    await emitEvent(Array.from({ length: 20 }, (_, i) => ({ accountId: k.accountId, data: { n: i } })));
    await waitForDeliveries(hook.inbox, 2, 10_000);
    const up = await api(`/api/webhooks/${hook.id}`, { method: "PUT", key: k.key, json: { maxPerSecond: 1000 } });
    expect(up.status).toBe(200);
    expect(await up.json()).toMatchObject({ maxPerSecond: 1000 });
    // Brought forward for the every-minute cron to enqueue; run it now.
    await onCronEvents(env, Date.now());
    const got = await waitForDeliveries(hook.inbox, 20, 10_000);
    expect(new Set(got.map((r) => r.webhookId)).size).toBe(20);

    const off = await api(`/api/webhooks/${hook.id}`, { method: "PUT", key: k.key, json: { maxPerSecond: null } });
    expect(await off.json()).toMatchObject({ maxPerSecond: null });
  });

  it("the endpoint's object hands concurrent callers distinct slots, evenly spaced, in call order within each call", async () => {
    const stub = env.WEBHOOK_THROTTLES.get(env.WEBHOOK_THROTTLES.idFromName(`wh_test_${Date.now()}`));
    const t0 = Date.now();
    const calls = await Promise.all(Array.from({ length: 10 }, (_, c) => stub.schedule(100, Array.from({ length: 10 }, (_, i) => `dlv_c${c}i${i}`))));
    for (const slots of calls) expect(slots.map((s) => s.at)).toEqual([...slots.map((s) => s.at)].sort((a, b) => a - b));
    const all = calls.flat().map((s) => s.at).sort((a, b) => a - b);
    expect(new Set(all).size).toBe(100);
    expect(all[0]).toBeGreaterThanOrEqual(t0);
    for (let i = 1; i < all.length; i++) expect(all[i]! - all[i - 1]!).toBeGreaterThanOrEqual(9);
    // 100 slots at 100/s span about a second; the first is due at once, the later ones are kept for the
    // object's alarm, which makes their attempts at their slots.
    expect(all[99]! - all[0]!).toBeLessThan(1_100);
    const bySlot = calls.flat().sort((a, b) => a.at - b.at);
    expect(bySlot[0]!.kept).toBe(false);
    expect(bySlot.filter((s) => s.at - all[0]! > 500).every((s) => s.kept)).toBe(true);
    await stub.reset();
  });

  it("the object's gate starts attempts asked for by RPC one after another, in call order, evenly spaced at the rate", { timeout: 15_000 }, async () => {
    const stub = env.WEBHOOK_THROTTLES.get(env.WEBHOOK_THROTTLES.idFromName(`wh_gate_${Date.now()}`));
    const started: { i: number; at: number }[] = [];
    // All asked at once, none with a slot ahead (as a late backlog would): the gate spaces them itself.
    const asked = Date.now();
    await Promise.all(Array.from({ length: 16 }, (_, i) => stub.admit(10, 0).then((ticket) => (started.push({ i, at: Date.now() }), stub.landed(ticket, Date.now())))));
    expect(started.map((s) => s.i)).toEqual(Array.from({ length: 16 }, (_, i) => i));
    // The i-th starts no earlier than i × 100 ms after they were asked for. An answer can only come late
    // (a busy machine bunches two answers), never before its slot, so this holds under load, and
    // without the spacing all 16 start at once.
    for (const s of started) expect(s.at - asked, `start ${s.i}`).toBeGreaterThanOrEqual(s.i * 100 - 5);
    expect(observedRate(started.map((s) => s.at)).maxInOneSecond).toBeLessThanOrEqual(11);
    // A slot ahead is waited for.
    const t0 = Date.now();
    await stub.admit(1000, t0 + 400);
    expect(Date.now()).toBeGreaterThanOrEqual(t0 + 400);
    await stub.reset();
  });
});
