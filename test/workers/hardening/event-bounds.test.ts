import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { announceMissedCompletions, UNANNOUNCEABLE } from "../../../src/messaging/campaigns/completion.ts";
import { newId } from "../../../src/platform/ids.ts";
import { api, createKey, errorOf, countOnShards } from "../helpers.ts";
import { json, sandboxSession } from "../messaging/support.ts";
import { uniquePhone } from "../campaigns/support.ts";
import { accountShard } from "../../../src/platform/shards.ts";

/** ~900 KB of attributes: every value within its own bound, the whole far over any event. */
const hugeAttributes = () => Object.fromEntries(Array.from({ length: 900 }, (_, i) => [`k${i}`, "v".repeat(1000)]));
/** ~900 KB of template components. */
const hugeComponents = () => [{ type: "body", parameters: Array.from({ length: 900 }, () => ({ type: "text", text: "p".repeat(1000) })) }];

/** Counted on every shard (the directory holds none of these tables). */
const count = countOnShards;

describe("fields that end up in an event are bounded at input; nothing is half-written", () => {
  it("a contact with ~900 KB of attributes is a 400 and stores nothing; the retry without them is created and announced", async () => {
    const k = await createKey();
    const phone = uniquePhone();
    const res = await api("/api/contacts", { method: "POST", key: k.key, json: { phone, attributes: hugeAttributes() } });
    expect(res.status).toBe(400);
    const err = await errorOf(res);
    expect(err.code).toBe("invalid_request");
    expect(JSON.stringify(err)).toContain("attributes");
    expect(await count("SELECT count(*) AS n FROM contacts WHERE account_id = ?", k.accountId)).toBe(0);

    const ok = await api("/api/contacts", { method: "POST", key: k.key, json: { phone, attributes: { city: "Lisbon" } } });
    expect(ok.status).toBe(201);
    const contact = await json<{ id: string }>(ok);
    // The row and its contact.created were written together.
    expect(await count("SELECT count(*) AS n FROM events WHERE account_id = ? AND type = 'contact.created' AND payload LIKE ?", k.accountId, `%${contact.id}%`)).toBe(1);
    // A duplicate records neither a row nor an event.
    expect((await api("/api/contacts", { method: "POST", key: k.key, json: { phone } })).status).toBe(409);
    expect(await count("SELECT count(*) AS n FROM events WHERE account_id = ? AND type = 'contact.created'", k.accountId)).toBe(1);
  });

  it("attributes are bounded on update and in imports too", async () => {
    const k = await createKey();
    const created = await json<{ id: string }>(await api("/api/contacts", { method: "POST", key: k.key, json: { phone: uniquePhone() } }));
    const patch = await api(`/api/contacts/${created.id}`, { method: "PUT", key: k.key, json: { attributes: hugeAttributes() } });
    expect(patch.status).toBe(400);
    const small = Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`k${i}`, "v".repeat(1000)]));
    const imported = await json<{ created: number; rejected: { index: number }[] }>(
      await api("/api/contacts/import", { method: "POST", key: k.key, json: { contacts: [{ phone: uniquePhone(), attributes: small }, { phone: uniquePhone(), attributes: hugeAttributes() }] } }),
    );
    expect(imported.created).toBe(1);
    expect(imported.rejected.map((r) => r.index)).toEqual([1]);
  });

  it("template components of ~900 KB are a 400 in sends, bulk sends and campaigns, and nothing is stored", async () => {
    const k = await createKey();
    const s = await sandboxSession(k.key);
    const template = { name: "order_update", language: "en_US", components: hugeComponents() };
    const send = await api("/api/messages/send", { method: "POST", key: k.key, json: { sessionId: s.id, to: "+14155550123", template } });
    expect(send.status).toBe(400);
    const bulk = await json<{ accepted: number; rejected: { index: number }[] }>(
      await api("/api/messages/send-bulk", { method: "POST", key: k.key, json: { sessionId: s.id, messages: [{ to: "+14155550123", template }, { to: "+14155550124", text: "hi" }] } }),
    );
    expect(bulk.accepted).toBe(1);
    expect(bulk.rejected.map((r) => r.index)).toEqual([0]);
    const campaign = await api("/api/campaigns", { method: "POST", key: k.key, json: { name: "x", sessionId: s.id, message: { template }, audience: { all: true } } });
    expect(campaign.status).toBe(400);
    expect(await count("SELECT count(*) AS n FROM messages WHERE account_id = ? AND type = 'template'", k.accountId)).toBe(0);
    expect(await count("SELECT count(*) AS n FROM campaigns WHERE account_id = ?", k.accountId)).toBe(0);
    // Deep nesting is refused the same way, without overflowing anything.
    let deep: unknown = "x";
    for (let i = 0; i < 5000; i++) deep = [deep];
    const nested = await api("/api/messages/send", { method: "POST", key: k.key, json: { sessionId: s.id, to: "+14155550123", template: { name: "t", language: "en", components: [{ type: "body", deep }] } } });
    expect(nested.status).toBe(400);
  });

  it("a campaign whose completion could not be announced is refused at creation (413 event_too_large)", async () => {
    const k = await createKey();
    const s = await sandboxSession(k.key);
    const contactIds = Array.from({ length: 10_000 }, (_, i) => `con_${String(i).padStart(60, "0")}`);
    const res = await api("/api/campaigns", { method: "POST", key: k.key, json: { name: "big", sessionId: s.id, message: { text: "hi" }, audience: { contactIds } } });
    expect(res.status).toBe(413);
    expect((await errorOf(res)).code).toBe("event_too_large");
    expect(await count("SELECT count(*) AS n FROM campaigns WHERE account_id = ?", k.accountId)).toBe(0);
  });
});

describe("cron: missed campaign completions", () => {
  it("go oldest first, one by one: a campaign that cannot be announced does not hold up the others", async () => {
    const k = await createKey();
    const s = await sandboxSession(k.key);
    const now = Date.now();
    const shard = await accountShard(env, k.accountId);
    const insert = (id: string, audience: string, completedAt: number) =>
      shard.d1.prepare(
        `INSERT INTO campaigns (id, account_id, session_id, name, status, message, audience, created_at, updated_at, completed_at, total, skipped)
         VALUES (?, ?, ?, 'c', 'completed', '{"text":"hi"}', ?, ?, ?, ?, 0, 0)`,
      )
        .bind(id, k.accountId, s.id, audience, completedAt, completedAt, completedAt)
        .run();
    // A legacy row whose event is far too large, completed first, then a normal one.
    const bad = newId("cmp", now - 3_600_000);
    const good = newId("cmp", now - 1_800_000);
    await insert(bad, JSON.stringify({ contactIds: Array.from({ length: 20_000 }, (_, i) => `con_${String(i).padStart(60, "0")}`) }), now - 3_600_000);
    await insert(good, JSON.stringify({ all: true }), now - 1_800_000);

    await announceMissedCompletions(env, shard, now);

    const state = async (id: string) => (await shard.d1.prepare("SELECT completion_event_id AS e FROM campaigns WHERE id = ?").bind(id).first<{ e: string | null }>())!.e;
    expect(await state(bad)).toBe(UNANNOUNCEABLE);
    const eventId = await state(good);
    expect(eventId).toMatch(/^evt_/);
    expect(await count("SELECT count(*) AS n FROM events WHERE id = ? AND type = 'campaign.completed'", eventId)).toBe(1);
    // Announced once: the next tick finds nothing to do.
    await announceMissedCompletions(env, shard, now + 60_000);
    expect(await count("SELECT count(*) AS n FROM events WHERE account_id = ? AND type = 'campaign.completed'", k.accountId)).toBe(1);
  });
});
