import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { getDb } from "../../../src/db/client.ts";
import { events } from "../../../src/db/schema/index.ts";
import { purgeExpiredEventRows } from "../../../src/events/retention.ts";
import { newId } from "../../../src/platform/ids.ts";
import { api, createKey } from "../helpers.ts";
import { getMessage, json, sandboxSession, type MessageJson } from "../messaging/support.ts";
import { postHook, textWebhook } from "../messaging/whatsapp-support.ts";
import { emitEvent, registerWebhook } from "../webhooks/support.ts";
import { poll, pollUntil } from "../events/poll.support.ts";

const DAY = 86_400_000;
const count = async (d1: D1Database, sql: string, ...binds: unknown[]) => (await d1.prepare(sql).bind(...binds).first<{ n: number }>())!.n;

describe("shards: accounts on different shards never meet", () => {
  it("two accounts on different shards: each one's rows only in its shard, and the other's ids are 404", async () => {
    const a = await createKey("pro", { shard: 0 });
    const b = await createKey("pro", { shard: 1 });
    const sa = await sandboxSession(a.key);
    const sb = await sandboxSession(b.key);
    const ma = await json<MessageJson>(await api("/api/messages/send", { method: "POST", key: a.key, json: { sessionId: sa.id, to: "+14155550101", text: "a" } }));
    const hb = await registerWebhook(b, { events: ["*"] });
    for (const [d1, own, other] of [[env.SHARD_0, a, b], [env.SHARD_1, b, a]] as const) {
      expect(await count(d1, "SELECT count(*) AS n FROM messaging_sessions WHERE account_id = ?", own.accountId)).toBe(1);
      expect(await count(d1, "SELECT count(*) AS n FROM messaging_sessions WHERE account_id = ?", other.accountId)).toBe(0);
      expect(await count(d1, "SELECT count(*) AS n FROM events WHERE account_id = ?", other.accountId)).toBe(0);
    }
    // The send is answered from the session's write buffer: a read of it has the session commit first.
    expect(await getMessage(a.key, ma.chatId, ma.id, sa.id)).toMatchObject({ id: ma.id });
    expect(await count(env.SHARD_0, "SELECT count(*) AS n FROM messages WHERE id = ?", ma.id)).toBe(1);
    expect(await count(env.SHARD_1, "SELECT count(*) AS n FROM messages WHERE id = ?", ma.id)).toBe(0);
    expect(await count(env.SHARD_1, "SELECT count(*) AS n FROM webhooks WHERE id = ?", hb.id)).toBe(1);
    // The other account's ids answer as missing ones do.
    expect((await api(`/api/sessions/${sa.id}`, { key: b.key })).status).toBe(404);
    expect((await api(`/api/sessions/${sb.id}`, { key: a.key })).status).toBe(404);
    expect((await api(`/api/webhooks/${hb.id}`, { key: a.key })).status).toBe(404);
    expect((await api("/api/messages/send", { method: "POST", key: b.key, json: { sessionId: sa.id, to: "+14155550101", text: "x" } })).status).toBe(404);
  });

  it("a callback for a session id the directory does not know is a 404 before any shard or Durable Object is reached", async () => {
    const res = await postHook(newId("ses"), textWebhook("123456", "wamid.nobody"));
    expect(res.status).toBe(404);
    // A sandbox session is no WhatsApp session, whatever shard it is on.
    const k = await createKey("pro", { shard: 1 });
    const s = await sandboxSession(k.key);
    expect((await postHook(s.id, textWebhook("123456", "wamid.sandbox"))).status).toBe(404);
  });

  it("the cron purges expired rows on every shard, a failing shard not stopping the others", async () => {
    const now = Date.now();
    const old = (acc: string) => ({ id: newId("evt", now - 40 * DAY), accountId: acc, type: "contact.created", sessionId: null, payload: "{}", createdAt: now - 40 * DAY, fannedOutAt: now, requeues: 0 });
    const rows = [old(newId("acc")), old(newId("acc")), old(newId("acc"))];
    await getDb(env.SHARD_0).insert(events).values(rows[0]!);
    await getDb(env.SHARD_1).insert(events).values(rows[1]!);
    await getDb(env.SHARD_2).insert(events).values(rows[2]!);
    // Shard 0 broken for this run: shards 1 and 2 are purged all the same.
    const broken = { ...env, SHARD_0: { prepare: () => { throw new Error("injected: shard down"); } } } as unknown as Env;
    await purgeExpiredEventRows(broken, now);
    expect(await count(env.SHARD_0, "SELECT count(*) AS n FROM events WHERE id = ?", rows[0]!.id)).toBe(1);
    expect(await count(env.SHARD_1, "SELECT count(*) AS n FROM events WHERE id = ?", rows[1]!.id)).toBe(0);
    expect(await count(env.SHARD_2, "SELECT count(*) AS n FROM events WHERE id = ?", rows[2]!.id)).toBe(0);
    await purgeExpiredEventRows(env, now);
    expect(await count(env.SHARD_0, "SELECT count(*) AS n FROM events WHERE id = ?", rows[0]!.id)).toBe(0);
  });

  it("the events poll reads the account's own shard: an account on shard 1 polls its events, one on shard 0 polling the same cursor gets none of them", async () => {
    const a = await createKey("pro", { shard: 0 });
    const b = await createKey("pro", { shard: 1 });
    const [startA, startB] = [(await poll(a)).next, (await poll(b)).next];
    const emitted = await emitEvent([1, 2].map((n) => ({ accountId: b.accountId, type: "contact.created" as const, data: { n } })));
    expect(await count(env.SHARD_1, "SELECT count(*) AS n FROM events WHERE account_id = ?", b.accountId)).toBe(2);
    const { events } = await pollUntil(b, startB, 2);
    expect(events.map((e) => e.id).sort()).toEqual(emitted.map((e) => e.id).sort());
    // A long poll past the settle time: b's events would be visible by then, were they in a's view.
    expect((await poll(a, `?after=${startA}&wait=4`)).data).toEqual([]);
  });
});
