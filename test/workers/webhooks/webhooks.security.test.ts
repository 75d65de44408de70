import { describe, expect, it } from "vitest";
import { api, configureInbox, createKey, deliveriesOf, emitEvent, newInbox, receivedAt, registerWebhook, waitFor } from "./support.ts";
import { getDb } from "../../../src/db/client.ts";
import { webhooks } from "../../../src/db/schema/index.ts";
import { eq } from "drizzle-orm";
import { env } from "cloudflare:workers";
import { shardDb } from "../helpers.ts";

describe("webhooks: security", () => {
  it("another account's webhooks and deliveries answer 404, exactly like missing ones, and are untouched", async () => {
    const owner = await createKey();
    const other = await createKey();
    const hook = await registerWebhook(owner, { events: ["*"] });
    const [ev] = await emitEvent({ accountId: owner.accountId });
    const [delivery] = await waitFor(async () => {
      const d = await deliveriesOf(owner, hook.id);
      return d.length && d[0]!.status !== "pending" ? d : undefined;
    });
    expect(delivery!.eventId).toBe(ev!.id);
    const paths: Array<[string, string, unknown?]> = [
      ["GET", `/api/webhooks/${hook.id}`],
      ["PUT", `/api/webhooks/${hook.id}`, { enabled: false }],
      ["PUT", `/api/webhooks/${hook.id}`, { rotateSecret: true }],
      ["DELETE", `/api/webhooks/${hook.id}`],
      ["POST", `/api/webhooks/${hook.id}/test`],
      ["GET", `/api/webhooks/${hook.id}/deliveries`],
      ["GET", `/api/webhooks/${hook.id}/deliveries/${delivery!.id}`],
      ["POST", `/api/webhooks/${hook.id}/deliveries/${delivery!.id}/retry`],
    ];
    for (const [method, path, json] of paths) {
      const res = await api(path, { method, key: other.key, json });
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(await res.json()).toEqual({ error: { code: "not_found", message: expect.any(String) } });
    }
    expect(((await (await api("/api/webhooks", { key: other.key })).json()) as { data: unknown[] }).data).toEqual([]);
    const still = (await (await api(`/api/webhooks/${hook.id}`, { key: owner.key })).json()) as { enabled: boolean };
    expect(still.enabled).toBe(true);
    expect(await receivedAt(hook.inbox)).toHaveLength(1);
  });

  it("the secret is shown only at creation and rotation: never in get, list, update, or the deliveries log", async () => {
    const k = await createKey();
    const hook = await registerWebhook(k, { events: ["*"] });
    await emitEvent({ accountId: k.accountId });
    await waitFor(async () => (await deliveriesOf(k, hook.id)).some((d) => d.status === "succeeded"));
    const bodies = await Promise.all([
      api(`/api/webhooks/${hook.id}`, { key: k.key }).then((r) => r.text()),
      api("/api/webhooks", { key: k.key }).then((r) => r.text()),
      api(`/api/webhooks/${hook.id}`, { method: "PUT", key: k.key, json: { description: "x" } }).then((r) => r.text()),
      api(`/api/webhooks/${hook.id}/deliveries`, { key: k.key }).then((r) => r.text()),
    ]);
    const secretB64 = hook.secret.slice("whsec_".length);
    for (const b of bodies) expect(b).not.toContain(secretB64);
  });

  it("deliveries do not follow redirects (a 3xx is a failed attempt)", async () => {
    const k = await createKey();
    const target = newInbox();
    await configureInbox(target.name, { secrets: [] });
    const hook = await registerWebhook(k, { events: ["*"] }, { then: 307, redirectTo: target.url });
    const [ev] = await emitEvent({ accountId: k.accountId });
    const d = await waitFor(async () => (await deliveriesOf(k, hook.id)).find((x) => x.eventId === ev!.id && x.attemptCount >= 1));
    expect(d.attempts[0]).toMatchObject({ statusCode: 307, error: expect.stringMatching(/^redirect not followed/) });
    expect(await receivedAt(target.name)).toEqual([]);
  });

  it("a URL that became unsafe (e.g. written before a rule change) is refused at delivery time, not called", async () => {
    const k = await createKey();
    const hook = await registerWebhook(k, { events: ["*"] });
    await (await shardDb(k.accountId)).update(webhooks).set({ url: "https://169.254.169.254/latest/meta-data/" }).where(eq(webhooks.id, hook.id));
    const [ev] = await emitEvent({ accountId: k.accountId });
    const d = await waitFor(async () => (await deliveriesOf(k, hook.id)).find((x) => x.eventId === ev!.id && x.status === "failed"));
    expect(d.attempts).toEqual([expect.objectContaining({ statusCode: null, error: expect.stringMatching(/^URL refused/) })]);
  });

  it("hostile URLs are refused at registration and on update", async () => {
    const k = await createKey();
    const hook = await registerWebhook(k);
    for (const url of ["https://[::ffff:127.0.0.1]/", "https://0xa9fea9fe/", "https://metadata.google.internal/", "https://u:p@example.com/", "https://10.0.0.1/", "ftp://example.com/"]) {
      const created = await api("/api/webhooks", { method: "POST", key: k.key, json: { url, events: ["*"] } });
      expect(created.status, url).toBe(400);
      const updated = await api(`/api/webhooks/${hook.id}`, { method: "PUT", key: k.key, json: { url } });
      expect(updated.status, url).toBe(400);
    }
  });

  it("each delivery carries fresh Standard Webhooks headers; an old signature does not verify a new body", async () => {
    const k = await createKey();
    const hook = await registerWebhook(k, { events: ["*"] });
    await emitEvent([{ accountId: k.accountId }, { accountId: k.accountId }]);
    const got = await waitFor(async () => {
      const r = await receivedAt(hook.inbox);
      return r.length >= 2 ? r : undefined;
    });
    expect(got[0]!.webhookId).not.toBe(got[1]!.webhookId);
    expect(Math.abs(Number(got[0]!.timestamp) - Date.now() / 1000)).toBeLessThan(30);
    const { verifyWith } = await import("./support.ts");
    expect(await verifyWith(hook.secret, got[1]!.body, got[0]!)).toBe(false);
  });
});
