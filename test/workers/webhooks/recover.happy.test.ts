import { describe, expect, it } from "vitest";
import { configureInbox, createKey, emitEvent, receivedAt, registerWebhook, waitFor, waitForDeliveries } from "./support.ts";
import { failedDeliveries, logByEvent, recoverOk } from "./recover.support.ts";

const settle = () => new Promise((r) => setTimeout(r, 1500));

describe("webhooks: recover, happy path", () => {
  it("queues exactly the failed deliveries since `since`, oldest first, once each, with their original webhook-id", async () => {
    const k = await createKey();
    const hook = await registerWebhook(k, { events: ["*"] });
    const since = new Date().toISOString();
    const [ok] = await emitEvent({ accountId: k.accountId });
    await waitForDeliveries(hook.inbox, 1);
    const failed = await failedDeliveries(k, hook, 3);
    const attemptsBefore = (await receivedAt(hook.inbox)).length;
    await configureInbox(hook.inbox, { secrets: [hook.secret], then: 200 });

    // limit 1: the oldest failed delivery goes first, the others stay failed.
    expect(await recoverOk(k, hook.id, { since, limit: 1 })).toEqual({ queued: 1, hasMore: true, since });
    let log = await logByEvent(k, hook.id);
    expect(log.get(failed[0]!)!.status).not.toBe("failed");
    expect([log.get(failed[1]!)!.status, log.get(failed[2]!)!.status]).toEqual(["failed", "failed"]);
    expect(log.get(ok!.id)!.status).toBe("succeeded");

    expect(await recoverOk(k, hook.id, { since })).toEqual({ queued: 2, hasMore: false, since });
    // Nothing is failed any more: an immediate second call queues nothing (queued ones are not doubled).
    expect(await recoverOk(k, hook.id, { since })).toEqual({ queued: 0, hasMore: false, since });

    const got = await waitForDeliveries(hook.inbox, attemptsBefore + 3, 15_000);
    await settle();
    const again = (await receivedAt(hook.inbox)).slice(attemptsBefore);
    expect(again).toHaveLength(3);
    expect(again.map((r) => r.webhookId).sort()).toEqual([...failed].sort());
    expect(again.every((r) => r.verified)).toBe(true);
    expect(got.filter((r) => r.webhookId === ok!.id)).toHaveLength(1);
    log = await waitFor(async () => {
      const l = await logByEvent(k, hook.id);
      return failed.every((id) => l.get(id)!.status === "succeeded") ? l : undefined;
    });
    // The exhausted ones got exactly one more attempt (the schedule of 1,1,1 gives four before).
    for (const id of failed) expect(log.get(id)!.attemptCount).toBe(5);
  });

  it("concurrent recovers split the failed deliveries between them: none is queued twice", async () => {
    const k = await createKey();
    const hook = await registerWebhook(k, { events: ["*"] });
    const since = new Date().toISOString();
    const failed = await failedDeliveries(k, hook, 4);
    const before = (await receivedAt(hook.inbox)).length;
    await configureInbox(hook.inbox, { secrets: [hook.secret], then: 200 });
    const answers = await Promise.all([recoverOk(k, hook.id, { since }), recoverOk(k, hook.id, { since }), recoverOk(k, hook.id, { since })]);
    expect(answers.reduce((n, a) => n + a.queued, 0)).toBe(4);
    await waitForDeliveries(hook.inbox, before + 4, 15_000);
    await settle();
    expect((await receivedAt(hook.inbox)).slice(before).map((r) => r.webhookId).sort()).toEqual([...failed].sort());
  });

  it("leaves failures older than `since` alone", async () => {
    const k = await createKey();
    const hook = await registerWebhook(k, { events: ["*"] });
    const [old] = await failedDeliveries(k, hook, 1);
    await new Promise((r) => setTimeout(r, 5));
    const since = new Date().toISOString();
    const [recent] = await failedDeliveries(k, hook, 1);
    await configureInbox(hook.inbox, { secrets: [hook.secret], then: 200 });
    expect(await recoverOk(k, hook.id, { since })).toMatchObject({ queued: 1, hasMore: false });
    const log = await waitFor(async () => {
      const l = await logByEvent(k, hook.id);
      return l.get(recent!)!.status === "succeeded" ? l : undefined;
    });
    expect(log.get(old!)!.status).toBe("failed");
  });
});
