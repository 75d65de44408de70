import { describe, expect, it } from "vitest";
import { api, configureInbox, createKey, emitEvent, registerWebhook, waitFor } from "../webhooks/support.ts";
import { failedDeliveries } from "../webhooks/recover.support.ts";
import { allEvents, ids, listEvents, type LoggedEvent } from "./log.support.ts";

const tick = () => new Promise((r) => setTimeout(r, 3));

describe("events log: happy path", () => {
  it("lists the account's events newest first, filtered by type, session and time, paged by cursor without gaps or repeats", async () => {
    const k = await createKey();
    const emitted: string[] = [];
    const shape: Array<[string, string | null]> = [["message.received", "ses_a"], ["message.read", "ses_a"], ["message.received", "ses_b"], ["contact.created", null], ["message.received", "ses_a"]];
    let middle = "";
    for (const [i, [type, sessionId]] of shape.entries()) {
      if (i === 2) middle = new Date(Date.now() + 1).toISOString();
      await tick();
      emitted.push((await emitEvent({ accountId: k.accountId, type: type as "message.received", sessionId, data: { n: i } }))[0]!.id);
      await tick();
    }
    const newestFirst = [...emitted].reverse();
    const all = await listEvents(k, "limit=50");
    expect(ids(all.data)).toEqual(newestFirst);
    expect(all.nextCursor).toBeNull();
    expect(all.data[0]).toMatchObject({ type: "message.received", sessionId: "ses_a", payload: { type: "message.received", data: { n: 4 } } });

    expect(ids(await allEvents(k, "limit=1"))).toEqual(newestFirst);
    expect(ids(await allEvents(k, "limit=2&type=message.received"))).toEqual([emitted[4], emitted[2], emitted[0]]);
    expect(ids(await allEvents(k, "limit=1&sessionId=ses_a"))).toEqual([emitted[4], emitted[1], emitted[0]]);
    expect(ids(await allEvents(k, "limit=1&sessionId=ses_a&type=message.received"))).toEqual([emitted[4], emitted[0]]);
    expect(ids(await allEvents(k, `limit=2&since=${middle}`))).toEqual([emitted[4], emitted[3], emitted[2]]);
    expect(ids(await allEvents(k, `limit=2&until=${middle}`))).toEqual([emitted[1], emitted[0]]);
    expect(ids(await allEvents(k, `limit=1&since=${middle}&type=message.received`))).toEqual([emitted[4], emitted[2]]);
  });

  it("shows each event's deliveries and filters by their outcome; GET /api/events/:id answers one", async () => {
    const k = await createKey();
    const good = await registerWebhook(k, { events: ["message.read"] });
    const bad = await registerWebhook(k, { events: ["message.received"] });
    const [failed] = await failedDeliveries(k, bad, 1);
    const [read] = await emitEvent({ accountId: k.accountId, type: "message.read", data: { id: "m1" } });
    const [quiet] = await emitEvent({ accountId: k.accountId, type: "contact.created", data: { id: "ct1" } });
    const done = await waitFor(async () => {
      const e = (await listEvents(k)).data.find((x) => x.id === read!.id);
      return e?.deliveries[0]?.status === "succeeded" ? e : undefined;
    });
    expect(done.deliveries).toEqual([expect.objectContaining({ webhookId: good.id, status: "succeeded", attemptCount: 1, lastStatusCode: 200 })]);

    expect(ids((await listEvents(k, "delivery=failed")).data)).toEqual([failed]);
    expect(ids((await listEvents(k, "delivery=succeeded")).data)).toEqual([read!.id]);
    expect(ids((await listEvents(k, "delivery=pending")).data)).toEqual([]);
    expect(ids((await listEvents(k, "delivery=failed&type=message.read")).data)).toEqual([]);
    expect(ids((await listEvents(k, "delivery=succeeded&type=message.read")).data)).toEqual([read!.id]);

    const one = (await (await api(`/api/events/${failed}`, { key: k.key })).json()) as LoggedEvent;
    expect(one).toMatchObject({ id: failed, type: "message.received", deliveries: [{ webhookId: bad.id, status: "failed", attemptCount: 4 }] });
    const none = (await (await api(`/api/events/${quiet!.id}`, { key: k.key })).json()) as LoggedEvent;
    expect(none.deliveries).toEqual([]);
    // a recovered delivery shows as pending, then succeeded
    await configureInbox(bad.inbox, { secrets: [bad.secret], then: 200 });
    await api(`/api/webhooks/${bad.id}/recover`, { method: "POST", key: k.key, json: { since: new Date(Date.now() - 60_000).toISOString() } });
    await waitFor(async () => ids((await listEvents(k, "delivery=succeeded")).data).includes(failed!));
  });
});
