import { describe, expect, it } from "vitest";
import { EVENT_TYPES } from "../../../src/events/types.ts";
import { api, createKey, deliveriesOf, emitEvent, receivedAt, registerWebhook, verifyWith, waitFor, waitForDeliveries } from "./support.ts";

describe("webhooks: happy path", () => {
  it("delivers an emitted event, signed so the reference implementation verifies it", async () => {
    const k = await createKey();
    const hook = await registerWebhook(k, { events: ["message.received"] });
    expect(hook.secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    const data = { id: "msg_1", chatId: "123@c.us", text: "hello", status: "received" };
    const [event] = await emitEvent({ accountId: k.accountId, type: "message.received", data });

    const [got] = await waitForDeliveries(hook.inbox, 1);
    expect(got!.verified).toBe(true);
    expect(got!.webhookId).toBe(event!.id);
    const body = JSON.parse(got!.body) as { type: string; timestamp: string; data: unknown };
    expect(body).toEqual({ type: "message.received", timestamp: event!.timestamp, data });
    expect(new Date(body.timestamp).toISOString()).toBe(body.timestamp);

    // A tampered body, or another secret, does not verify.
    expect(await verifyWith(hook.secret, got!.body, got!)).toBe(true);
    expect(await verifyWith(hook.secret, got!.body.replace("hello", "hellO"), got!)).toBe(false);
    expect(await verifyWith("whsec_" + btoa("x".repeat(32)), got!.body, got!)).toBe(false);

    const log = await waitFor(async () => {
      const d = await deliveriesOf(k, hook.id);
      return d[0]?.status === "succeeded" ? d : undefined;
    });
    expect(log).toHaveLength(1);
    expect(log[0]).toMatchObject({ eventId: event!.id, eventType: "message.received", status: "succeeded", attemptCount: 1, lastStatusCode: 200, nextAttemptAt: null });
    expect(log[0]!.attempts).toEqual([expect.objectContaining({ attempt: 1, statusCode: 200, error: null, nextAttemptAt: null })]);
  });

  it("routes each event only to matching webhooks: type filter, *, session filter, other accounts", async () => {
    const a = await createKey();
    const b = await createKey();
    const all = await registerWebhook(a, { events: ["*"] });
    const readOnly = await registerWebhook(a, { events: ["message.read"] });
    const sess1 = await registerWebhook(a, { events: ["*"], sessionId: "ses_1" });
    const disabled = await registerWebhook(a, { events: ["*"], enabled: false });
    const otherAccount = await registerWebhook(b, { events: ["*"] });

    const emitted = await emitEvent(
      EVENT_TYPES.map((type, i) => ({ accountId: a.accountId, type, sessionId: i % 2 === 0 ? "ses_1" : "ses_2", data: { n: i } })),
    );
    const [bEvent] = await emitEvent({ accountId: b.accountId, type: "contact.created", data: { id: "ct_1" } });

    const gotAll = await waitForDeliveries(all.inbox, EVENT_TYPES.length);
    const gotSess = await waitForDeliveries(sess1.inbox, EVENT_TYPES.length / 2);
    const gotRead = await waitForDeliveries(readOnly.inbox, 1);
    const gotB = await waitForDeliveries(otherAccount.inbox, 1);
    // Let any stray deliveries arrive before asserting on absence.
    await new Promise((r) => setTimeout(r, 1500));

    expect((await receivedAt(all.inbox)).map((r) => r.type).sort()).toEqual([...EVENT_TYPES].sort());
    expect(new Set(gotAll.map((r) => r.webhookId))).toEqual(new Set(emitted.map((e) => e.id)));
    expect((await receivedAt(sess1.inbox)).map((r) => JSON.parse(r.body).data.n).sort((x, y) => x - y)).toEqual(EVENT_TYPES.map((_, i) => i).filter((i) => i % 2 === 0));
    expect((await receivedAt(readOnly.inbox)).map((r) => r.type)).toEqual(["message.read"]);
    expect(gotRead).toHaveLength(1);
    expect(gotSess.every((r) => r.verified)).toBe(true);
    expect(await receivedAt(disabled.inbox)).toEqual([]);
    expect((await receivedAt(otherAccount.inbox)).map((r) => r.webhookId)).toEqual([bEvent!.id]);
    expect(gotB[0]!.verified).toBe(true);
  });

  it("creates, reads, lists (paginated), updates and deletes webhooks; the secret is never listed", async () => {
    const k = await createKey();
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await registerWebhook(k, { events: ["message.sent", "message.sent"], description: `hook ${i}` })).id);

    const one = (await (await api(`/api/webhooks/${ids[0]}`, { key: k.key })).json()) as Record<string, unknown>;
    expect(one).toMatchObject({ id: ids[0], events: ["message.sent"], description: "hook 0", enabled: true, disabledReason: null, sessionId: null });
    expect(one.secret).toBeUndefined();

    const p1 = (await (await api("/api/webhooks?limit=2", { key: k.key })).json()) as { data: { id: string; secret?: string }[]; nextCursor: string };
    const p2 = (await (await api(`/api/webhooks?limit=2&cursor=${p1.nextCursor}`, { key: k.key })).json()) as { data: { id: string }[]; nextCursor: string | null };
    expect(p2.nextCursor).toBeNull();
    expect([...p1.data, ...p2.data].map((d) => d.id).sort()).toEqual([...ids].sort());
    expect(p1.data).toHaveLength(2);
    expect(p1.data.every((d) => d.secret === undefined)).toBe(true);

    const put = await api(`/api/webhooks/${ids[1]}`, { method: "PUT", key: k.key, json: { events: ["*", "message.read"], description: null, enabled: false } });
    expect(put.status).toBe(200);
    const updated = (await put.json()) as Record<string, unknown>;
    expect(updated).toMatchObject({ events: ["*"], description: null, enabled: false });
    expect(updated.secret).toBeUndefined();

    expect((await api(`/api/webhooks/${ids[2]}`, { method: "DELETE", key: k.key })).status).toBe(204);
    expect((await api(`/api/webhooks/${ids[2]}`, { key: k.key })).status).toBe(404);
    expect((await api(`/api/webhooks/${ids[2]}`, { method: "DELETE", key: k.key })).status).toBe(404);
  });

  it("POST /:id/test sends a signed webhook.test and answers the receiver's status", async () => {
    const k = await createKey();
    const hook = await registerWebhook(k, { events: ["message.read"] }, { script: [202, 503] });
    const first = await api(`/api/webhooks/${hook.id}/test`, { method: "POST", key: k.key });
    expect(first.status).toBe(200);
    expect(await first.json()).toMatchObject({ success: true, statusCode: 202, error: null });
    const second = (await (await api(`/api/webhooks/${hook.id}/test`, { method: "POST", key: k.key })).json()) as { success: boolean; statusCode: number; deliveryId: string };
    expect(second).toMatchObject({ success: false, statusCode: 503 });

    const got = await receivedAt(hook.inbox);
    expect(got.map((g) => g.type)).toEqual(["webhook.test", "webhook.test"]);
    expect(got.every((g) => g.verified)).toBe(true);
    // A failed test is logged but never retried.
    await new Promise((r) => setTimeout(r, 1500));
    expect(await receivedAt(hook.inbox)).toHaveLength(2);
    const log = await deliveriesOf(k, hook.id);
    expect(log.find((d) => d.id === second.deliveryId)).toMatchObject({ status: "failed", attemptCount: 1, lastStatusCode: 503 });
  });

  it("secret rotation: during the grace period each delivery verifies with both the old and the new secret", async () => {
    const k = await createKey();
    const hook = await registerWebhook(k, { events: ["contact.created"] });
    const res = await api(`/api/webhooks/${hook.id}`, { method: "PUT", key: k.key, json: { rotateSecret: true } });
    expect(res.status).toBe(200);
    const rotated = (await res.json()) as { secret: string; previousSecretExpiresAt: string };
    expect(rotated.secret).toMatch(/^whsec_/);
    expect(rotated.secret).not.toBe(hook.secret);
    expect(Date.parse(rotated.previousSecretExpiresAt)).toBeGreaterThan(Date.now());

    const { configureInbox } = await import("./support.ts");
    await configureInbox(hook.inbox, { secrets: [hook.secret, rotated.secret] });
    await emitEvent({ accountId: k.accountId, type: "contact.created", data: { id: "ct_9" } });
    const [got] = await waitForDeliveries(hook.inbox, 1);
    expect(got!.verifiedBy).toEqual([true, true]);
    expect(got!.signature.split(" ")).toHaveLength(2);
    // The secret is shown once: GET does not show it again.
    expect(((await (await api(`/api/webhooks/${hook.id}`, { key: k.key })).json()) as { secret?: string }).secret).toBeUndefined();
  });
});
