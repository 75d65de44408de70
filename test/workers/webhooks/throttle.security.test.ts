import { describe, expect, it } from "vitest";
import { observedRate } from "../../support/throttle-rate.ts";
import { api, createKey, emitEvent, receivedAt, registerWebhook, waitForDeliveries } from "./support.ts";

describe("webhook throttle: security", () => {
  it("another account cannot read or change an endpoint's rate", async () => {
    const a = await createKey();
    const b = await createKey();
    const hook = await registerWebhook(a, { maxPerSecond: 5 });
    expect((await api(`/api/webhooks/${hook.id}`, { key: b.key })).status).toBe(404);
    expect((await api(`/api/webhooks/${hook.id}`, { method: "PUT", key: b.key, json: { maxPerSecond: 1000 } })).status).toBe(404);
    expect(((await (await api(`/api/webhooks/${hook.id}`, { key: a.key })).json()) as { maxPerSecond: number }).maxPerSecond).toBe(5);
  });

  it("each endpoint has its own throttle: one account's slow endpoint does not hold back another account's", async () => {
    const a = await createKey();
    const b = await createKey();
    const slowA = await registerWebhook(a, { events: ["contact.created"], maxPerSecond: 2 });
    const slowB = await registerWebhook(b, { events: ["contact.created"], maxPerSecond: 20 });
    await emitEvent(Array.from({ length: 20 }, (_, n) => ({ accountId: a.accountId, type: "contact.created" as const, data: { n } })));
    await emitEvent(Array.from({ length: 20 }, (_, n) => ({ accountId: b.accountId, type: "contact.created" as const, data: { n } })));
    const gotB = await waitForDeliveries(slowB.inbox, 20, 15_000);
    // B's 20 at 20/s take about a second; A's at 2/s would take ten: B was not queued behind A.
    expect(observedRate(gotB.map((r) => r.receivedAt)).spanMs).toBeLessThan(4_000);
    expect((await receivedAt(slowA.inbox)).length).toBeLessThan(20);
  });
});
