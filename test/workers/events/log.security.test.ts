import { describe, expect, it } from "vitest";
import { getDb } from "../../../src/db/client.ts";
import { webhookDeliveries } from "../../../src/db/schema/index.ts";
import { newId } from "../../../src/platform/ids.ts";
import { api, createKey, emitEvent, env } from "../webhooks/support.ts";
import { listEvents } from "./log.support.ts";
import { shardDb } from "../helpers.ts";

describe("events log: security", () => {
  it("another account's events are invisible: 404 by id, absent from every list and filter", async () => {
    const owner = await createKey();
    const other = await createKey();
    const [ev] = await emitEvent({ accountId: owner.accountId, sessionId: "ses_x" });
    const res = await api(`/api/events/${ev!.id}`, { key: other.key });
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: { code: "not_found", message: expect.any(String) } });
    for (const q of ["", "type=message.received", "sessionId=ses_x", "sessionId=ses_x&type=message.received", "delivery=pending"]) {
      expect((await listEvents(other, q)).data, q).toEqual([]);
    }
    expect((await api("/api/events")).status).toBe(401);
    expect((await api(`/api/events/${ev!.id}`)).status).toBe(401);
  });

  it("a delivery row of another account never shows on this account's event, nor makes it match a delivery filter", async () => {
    const owner = await createKey();
    const other = await createKey();
    const [ev] = await emitEvent({ accountId: owner.accountId, type: "contact.created", data: { id: "ct" } });
    const now = Date.now();
    // In the owner's shard: only the account check keeps it out.
    await (await shardDb(owner.accountId)).insert(webhookDeliveries).values({
      id: newId("dlv", now), accountId: other.accountId, webhookId: "wh_other", eventId: ev!.id, eventType: "contact.created",
      status: "failed", attempts: 1, nextAttemptAt: null, queuedAt: null, createdAt: now, updatedAt: now,
    });
    const one = (await (await api(`/api/events/${ev!.id}`, { key: owner.key })).json()) as { deliveries: unknown[] };
    expect(one.deliveries).toEqual([]);
    expect((await listEvents(owner, "delivery=failed")).data).toEqual([]);
    expect((await listEvents(other, "delivery=failed")).data).toEqual([]);
  });
});
