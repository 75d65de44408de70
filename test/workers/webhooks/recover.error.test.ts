import { describe, expect, it } from "vitest";
import { api, configureInbox, createKey, deliveriesOf, errorOf, registerWebhook } from "./support.ts";
import { failedDeliveries, recover, recoverOk } from "./recover.support.ts";

const DAY = 86_400_000;

describe("webhooks: recover, errors", () => {
  it("refuses a `since` in the future, past the retention window, or malformed, and a bad limit, with 400", async () => {
    const k = await createKey();
    const hook = await registerWebhook(k, { events: ["*"] });
    const bodies: unknown[] = [
      { since: new Date(Date.now() + 60_000).toISOString() },
      { since: new Date(Date.now() - 31 * DAY).toISOString() },
      { since: "yesterday" },
      { since: "2026-13-45T99:00:00Z" },
      { since: "x".repeat(100_000) },
      { since: 1_700_000_000_000 },
      {},
      { since: new Date().toISOString(), limit: 0 },
      { since: new Date().toISOString(), limit: 501 },
      { since: new Date().toISOString(), limit: 1.5 },
      { since: new Date().toISOString(), extra: true },
    ];
    for (const body of bodies) {
      const res = await recover(k, hook.id, body);
      expect(res.status, JSON.stringify(body).slice(0, 80)).toBe(400);
      expect((await errorOf(res)).code).toBe("invalid_request");
    }
    // Inside the window is fine, even with nothing to do.
    expect(await recoverOk(k, hook.id, { since: new Date(Date.now() - 29 * DAY).toISOString() })).toMatchObject({ queued: 0, hasMore: false });
  });

  it("answers 404 for an unknown webhook and 409 for a disabled one (nothing queued)", async () => {
    const k = await createKey();
    expect((await recover(k, "wh_nope", { since: new Date().toISOString() })).status).toBe(404);
    const hook = await registerWebhook(k, { events: ["*"] });
    const since = new Date().toISOString();
    await failedDeliveries(k, hook, 1);
    await api(`/api/webhooks/${hook.id}`, { method: "PUT", key: k.key, json: { enabled: false } });
    const res = await recover(k, hook.id, { since });
    expect(res.status).toBe(409);
    expect((await errorOf(res)).code).toBe("webhook_disabled");
    expect((await deliveriesOf(k, hook.id)).map((d) => d.status)).toEqual(["failed"]);
  });

  it("never recovers a failed `webhook.test` send (test sends are one-shot)", async () => {
    const k = await createKey();
    const hook = await registerWebhook(k, { events: ["*"] }, { then: 500 });
    const since = new Date().toISOString();
    const res = await api(`/api/webhooks/${hook.id}/test`, { method: "POST", key: k.key });
    expect(((await res.json()) as { success: boolean }).success).toBe(false);
    await configureInbox(hook.inbox, { secrets: [hook.secret], then: 200 });
    expect(await recoverOk(k, hook.id, { since })).toEqual({ queued: 0, hasMore: false, since });
  });
});
