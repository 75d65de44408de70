import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { events } from "../../../src/db/schema/index.ts";
import { claimFanOut } from "../../../src/events/first-attempts.ts";
import { newId } from "../../../src/platform/ids.ts";
import { accountShard } from "../../../src/platform/shards.ts";
import { syntheticEventIds } from "../event-tap.ts";
import { createKey, env, registerWebhook } from "./support.ts";

// WEBHOOK_LEASE_MS is how long a consumer lost mid-way holds up its events: the fan-out's lease is taken for it.
describe("WEBHOOK_LEASE_MS", () => {
  it("is the length of the lease a fan-out takes on its events", async () => {
    const k = await createKey();
    await registerWebhook(k, { events: ["message.sent"] });
    const shard = await accountShard(env, k.accountId);
    const leaseOf = async (vars: Record<string, string>) => {
      const id = newId("evt");
      syntheticEventIds.add(id); // made-up data: not checked against the catalog
      const now = Date.now();
      await shard.db.insert(events).values({ id, accountId: k.accountId, type: "message.sent", sessionId: null, payload: JSON.stringify({ type: "message.sent", data: { id: "msg_lease" } }), createdAt: now });
      await claimFanOut({ ...env, ...vars } as Env, shard, [id], now);
      const [row] = await shard.db.select({ until: events.fanoutLeaseUntil }).from(events).where(eq(events.id, id));
      return row!.until! - now;
    };
    expect(await leaseOf({})).toBe(60_000);
    expect(await leaseOf({ WEBHOOK_LEASE_MS: "45000" })).toBe(45_000);
    // never shorter than an attempt's timeout + 20 s
    expect(await leaseOf({ WEBHOOK_LEASE_MS: "1", WEBHOOK_TIMEOUT_MS: "5000" })).toBe(25_000);
  });
});
