import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { config } from "../../../src/platform/config.ts";
import { accountShard, newAccountShard, pickShard, shardIndexes } from "../../../src/platform/shards.ts";
import { api, createKey } from "../helpers.ts";
import { carriedEventIds } from "../event-tap.ts";
import { eventsOf, getMessage, json, sandboxSession, sendText, waitFor, type MessageJson } from "../messaging/support.ts";
import { postHook, textWebhook, whatsappSession } from "../messaging/whatsapp-support.ts";
import { deliveriesOf, emitEvent, registerWebhook, waitForDeliveries } from "../webhooks/support.ts";

const count = async (d1: D1Database, sql: string, ...binds: unknown[]) => (await d1.prepare(sql).bind(...binds).first<{ n: number }>())!.n;

describe("shards: where accounts and their rows live", () => {
  it("the tests run on wrangler.toml's two shards and SHARD_2, a shard just added that takes no new accounts", () => {
    expect(shardIndexes(env)).toEqual([0, 1, 2]);
    expect(config(env).shards.newAccountShards).toEqual([0, 1]);
  });

  it("a new account lands on a shard of NEW_ACCOUNT_SHARDS, the same one every time for its id, and both are used", async () => {
    const picks = Array.from({ length: 200 }, (_, i) => newAccountShard(env, `acc_${i.toString(36).padStart(9, "0")}x`));
    expect(new Set(picks)).toEqual(new Set([0, 1]));
    // Spread, not skewed: each shard gets a fair share of 200 ids.
    expect(picks.filter((p) => p === 0).length).toBeGreaterThan(60);
    expect(newAccountShard(env, "acc_same")).toBe(newAccountShard(env, "acc_same"));
    // Configured to one shard, every new account goes there.
    const onlyTwo = { ...env, NEW_ACCOUNT_SHARDS: "2" } as Env;
    expect(new Set(Array.from({ length: 50 }, (_, i) => newAccountShard(onlyTwo, `acc_${i}`)))).toEqual(new Set([2]));
    // The key lookup carries the shard: the account's rows go where the directory says.
    const k = await createKey("pro", { shard: 1 });
    expect((await accountShard(env, k.accountId)).index).toBe(1);
    await sandboxSession(k.key);
    expect(await count(env.SHARD_1, "SELECT count(*) AS n FROM messaging_sessions WHERE account_id = ?", k.accountId)).toBe(1);
    expect(await count(env.SHARD_0, "SELECT count(*) AS n FROM messaging_sessions WHERE account_id = ?", k.accountId)).toBe(0);
  });

  it("adding a shard moves nothing: accounts keep their shard, and one placed on the new shard works there", async () => {
    const before = await createKey("pro", { shard: 0 });
    const s = await sandboxSession(before.key);
    // SHARD_2 is bound (as if just added): the existing account still reads its shard 0 rows.
    expect((await accountShard(env, before.accountId)).index).toBe(0);
    expect((await json<{ id: string }>(await api(`/api/sessions/${s.id}`, { key: before.key }))).id).toBe(s.id);
    // The same id always maps to the same pick: adding a shard to the bindings changes no existing pick.
    expect(pickShard(before.accountId, [0, 1])).toBe(newAccountShard(env, before.accountId));
    // An account placed on the new shard (NEW_ACCOUNT_SHARDS naming it, or moved by hand) lives there alone.
    const fresh = await createKey("pro", { shard: 2 });
    const s2 = await sandboxSession(fresh.key);
    expect(await count(env.SHARD_2, "SELECT count(*) AS n FROM messaging_sessions WHERE id = ?", s2.id)).toBe(1);
    expect(await count(env.SHARD_0, "SELECT count(*) AS n FROM messaging_sessions WHERE id = ?", s2.id)).toBe(0);
    const sent = await api("/api/messages/send", { method: "POST", key: fresh.key, json: { sessionId: s2.id, to: "+14155550100", text: "on the new shard" } });
    expect(sent.status).toBe(201);
    const m = await json<MessageJson>(sent);
    await waitFor(() => eventsOf(fresh.accountId, "message.sent").some((e) => (e.data as { id: string }).id === m.id), 10_000, "message.sent from shard 2");
    expect(await count(env.SHARD_2, "SELECT count(*) AS n FROM messages WHERE id = ?", m.id)).toBe(1);
  });

  it("a WhatsApp callback names only the session: the directory routes it to the account's shard", async () => {
    const k = await createKey("pro", { shard: 1 });
    const { phone, session } = await whatsappSession(k.key);
    expect((await postHook(session.id, textWebhook(phone.phoneNumberId, "wamid.routed-to-shard-1"))).status).toBe(200);
    expect(await count(env.SHARD_1, "SELECT count(*) AS n FROM messages WHERE session_id = ? AND external_id = ?", session.id, "wamid.routed-to-shard-1")).toBe(1);
    expect(await count(env.SHARD_0, "SELECT count(*) AS n FROM messages WHERE session_id = ?", session.id)).toBe(0);
    const route = await env.DB.prepare("SELECT account_id, network FROM session_routes WHERE session_id = ?").bind(session.id).first<{ account_id: string; network: string }>();
    expect(route).toEqual({ account_id: k.accountId, network: "whatsapp" });
    await waitFor(() => eventsOf(k.accountId, "message.received").length === 1, 10_000, "message.received");
  });

  it("a session's group commits go to its account's shard: sends of an account on shard 1 are there after the read that commits them, and their events' queue messages carry the records and shard 1", async () => {
    const k = await createKey("pro", { shard: 1 });
    const s = await sandboxSession(k.key);
    const sent = await Promise.all(Array.from({ length: 6 }, (_, i) => sendText(k.key, s.id, `+1415555${String(4100 + i)}`, `buffered ${i}`)));
    // The history read has the session commit first (read your writes), so the rows are in D1 now.
    expect(await getMessage(k.key, sent[0]!.chatId, sent[0]!.id, s.id)).toMatchObject({ id: sent[0]!.id });
    for (const m of sent) {
      expect(await count(env.SHARD_1, "SELECT count(*) AS n FROM messages WHERE id = ?", m.id)).toBe(1);
      expect(await count(env.SHARD_0, "SELECT count(*) AS n FROM messages WHERE id = ?", m.id)).toBe(0);
    }
    expect(await count(env.SHARD_0, "SELECT count(*) AS n FROM events WHERE account_id = ?", k.accountId)).toBe(0);
    // The tap reads each event from the shard its message names: seen only if that was shard 1.
    const sentEvents = await waitFor(() => {
      const got = eventsOf(k.accountId, "message.sent");
      return got.length >= sent.length ? got : undefined;
    }, 10_000, "message.sent of every send");
    for (const e of sentEvents) expect(carriedEventIds.has(e.id), `${e.id} carried its record`).toBe(true);
  });

  it("a throttled webhook of an account on shard 1 gets every delivery, those its throttle object keeps and releases later too", { timeout: 30_000 }, async () => {
    const k = await createKey("pro", { shard: 1 });
    // 8 events at 2/s: slots up to 3.5 s ahead, the farther ones kept by the object and queued by its alarm.
    const hook = await registerWebhook(k, { events: ["message.received"], maxPerSecond: 2 });
    expect(await count(env.SHARD_1, "SELECT count(*) AS n FROM webhooks WHERE id = ?", hook.id)).toBe(1);
    const emitted = await emitEvent(Array.from({ length: 8 }, (_, i) => ({ accountId: k.accountId, data: { n: i } })));
    const got = await waitForDeliveries(hook.inbox, 8, 20_000);
    expect(new Set(got.map((r) => r.webhookId))).toEqual(new Set(emitted.map((e) => e.id)));
    const log = await waitFor(async () => {
      const rows = await deliveriesOf(k, hook.id);
      return rows.length === 8 && rows.every((d) => d.status === "succeeded") ? rows : undefined;
    }, 10_000, "all deliveries succeeded");
    expect(log.every((d) => d.attemptCount === 1)).toBe(true);
    expect(await count(env.SHARD_0, "SELECT count(*) AS n FROM webhook_deliveries WHERE webhook_id = ?", hook.id)).toBe(0);
  });
});
