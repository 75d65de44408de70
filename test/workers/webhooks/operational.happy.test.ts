import { describe, expect, it } from "vitest";
import { api, createKey, emitEvent, registerWebhook, waitForDeliveries } from "./support.ts";
import { openStream } from "../events/stream.support.ts";

describe("operational events: happy path", () => {
  it("a 410 disables the endpoint; the live stream and the account's subscribing endpoint hear webhook.disabled and webhook.delivery_exhausted, signed", async () => {
    const k = await createKey();
    const gone = await registerWebhook(k, { events: ["message.received"] }, { script: [410] });
    const ops = await registerWebhook(k, { events: ["webhook.disabled", "webhook.delivery_exhausted"] });
    const stream = await openStream("", { key: k.key });
    const [ev] = await emitEvent({ accountId: k.accountId, type: "message.received" });
    // the live stream carries them too
    expect((await stream.next((e) => e.type === "webhook.disabled", 15_000)).data).toMatchObject({ webhookId: gone.id, reason: "gone" });
    expect((await stream.next((e) => e.type === "webhook.delivery_exhausted", 15_000)).data).toMatchObject({ webhookId: gone.id, eventId: ev!.id });
    stream.ws.close(1000);

    const got = await waitForDeliveries(ops.inbox, 2, 15_000);
    expect(got.every((r) => r.verified)).toBe(true);
    const bodies = new Map(got.map((r) => [r.type, JSON.parse(r.body) as { data: Record<string, unknown> }]));
    expect(bodies.get("webhook.disabled")!.data).toEqual({ webhookId: gone.id, url: gone.url, reason: "gone", disabledAt: expect.any(String) });
    expect(bodies.get("webhook.delivery_exhausted")!.data).toEqual({
      webhookId: gone.id, deliveryId: expect.stringMatching(/^dlv_/), eventId: ev!.id, eventType: "message.received", attempts: 1, lastStatusCode: 410, lastError: expect.any(String),
    });
    const hook = (await (await api(`/api/webhooks/${gone.id}`, { key: k.key })).json()) as { enabled: boolean; disabledReason: string };
    expect(hook).toMatchObject({ enabled: false, disabledReason: "gone" });
  });

  it("GET /api/event-types lists both with a schema and an example", async () => {
    const k = await createKey();
    const res = await api("/api/event-types", { key: k.key });
    const types = ((await res.json()) as { data: { type: string; schema: unknown; example: unknown }[] }).data;
    for (const t of ["webhook.disabled", "webhook.delivery_exhausted"]) {
      const entry = types.find((x) => x.type === t);
      expect(entry, t).toBeDefined();
      expect(entry!.schema).toBeTruthy();
      expect(entry!.example).toBeTruthy();
    }
  });
});
