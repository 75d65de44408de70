import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { api, createKey, shardD1 } from "../helpers.ts";
import { eventsOf, json, sandboxSession, waitFor, type MessageJson } from "../messaging/support.ts";
import { receivedAt, registerWebhook, waitForDeliveries } from "../webhooks/support.ts";
import { action, createCampaign, createContact, getCampaign, importContacts, recipients, uniquePhone, watch, type CampaignJson } from "./support.ts";

async function messageOf(key: string, chatId: string, id: string): Promise<MessageJson | undefined> {
  const page = await json<{ data: MessageJson[] }>(await api(`/api/messages/${chatId}?limit=100`, { key }));
  return page.data.find((m) => m.id === id);
}

describe("campaigns: a tag audience with personalisation", () => {
  it("each recipient gets their own text; opted out and duplicates skipped; stats add up; completed once; receipts keep counting", async () => {
    const k = await createKey("pro");
    const s = await sandboxSession(k.key);
    const ada = await createContact(k.key, { phone: uniquePhone(), name: "Ada", tags: ["vip"], attributes: { city: "London" } });
    const bob = await createContact(k.key, { phone: uniquePhone(), tags: ["vip", "news"] });
    const out = await createContact(k.key, { phone: uniquePhone(), name: "Opted", tags: ["vip"], optedOut: true });
    await createContact(k.key, { phone: uniquePhone(), name: "Other", tags: ["other"] });
    const bulk = Array.from({ length: 40 }, (_, i) => ({ phone: uniquePhone(), name: `Bulk ${i}`, tags: ["news"], attributes: { city: `C${i}` } }));
    await importContacts(k.key, bulk);
    // Ada listed twice by id (a duplicate), and again through her tag (the same recipient, not a third).
    const c = await createCampaign(k.key, {
      sessionId: s.id,
      message: { text: "Hi {{name|there}} from {{attributes.city|nowhere}}" },
      audience: { contactIds: [ada.id, ada.id], tags: ["vip", "news"] },
    });
    expect(c).toMatchObject({ status: "draft", stats: { total: 0 } });

    const started = await json<CampaignJson>(await action(k.key, c.id, "start"));
    expect(started.status).toMatch(/running|completed/);
    const { last, seen } = await watch(k.key, c.id, (x) => x.status === "completed");
    // 1 (Ada) + 1 duplicate of Ada + Bob + opted out + 40 bulk = 44 entries
    expect(last.stats).toMatchObject({ total: 44, skipped: 2, pending: 0, failed: 0 });
    expect(last.stats.sent + last.stats.delivered + last.stats.read).toBe(42);
    expect(seen.length).toBeGreaterThan(0);

    const rs = await recipients(k.key, c.id);
    expect(rs).toHaveLength(44);
    expect(rs[0]).toMatchObject({ seq: 1, contactId: ada.id, name: "Ada" });
    expect(rs[1]).toMatchObject({ seq: 2, contactId: ada.id, status: "skipped", reason: "duplicate", messageId: null });
    expect(rs.find((r) => r.contactId === out.id)).toMatchObject({ status: "skipped", reason: "opted_out" });
    const sent = rs.filter((r) => r.status !== "skipped");
    expect(new Set(sent.map((r) => r.messageId)).size).toBe(42);
    // Everyone got their own text.
    const adaMsg = await messageOf(k.key, rs[0]!.chatId, rs[0]!.messageId!);
    expect(adaMsg).toMatchObject({ text: "Hi Ada from London", campaignId: c.id });
    const bobR = rs.find((r) => r.contactId === bob.id)!;
    expect((await messageOf(k.key, bobR.chatId, bobR.messageId!))?.text).toBe("Hi there from nowhere");
    const b7 = rs.find((r) => r.name === "Bulk 7")!;
    expect((await messageOf(k.key, b7.chatId, b7.messageId!))?.text).toBe("Hi Bulk 7 from C7");
    // Exactly one message per recipient, all linked to the campaign.
    const count = await (await shardD1(k.accountId)).prepare("SELECT count(*) AS n, count(DISTINCT chat_id) AS chats FROM messages WHERE campaign_id = ?").bind(c.id).first<{ n: number; chats: number }>();
    expect(count).toEqual({ n: 42, chats: 42 });

    // Receipts keep updating the stats after completion.
    const final = await waitFor(async () => {
      const x = await getCampaign(k.key, c.id);
      return x.stats.read === 42 ? x : undefined;
    }, 10_000, "read receipts");
    expect(final).toMatchObject({ status: "completed", stats: { total: 44, read: 42, sent: 0, delivered: 0, skipped: 2, pending: 0 } });
    const completed = await waitFor(() => eventsOf(k.accountId, "campaign.completed").length > 0 && eventsOf(k.accountId, "campaign.completed"), 10_000, "campaign.completed");
    await new Promise((r) => setTimeout(r, 500));
    expect(eventsOf(k.accountId, "campaign.completed")).toHaveLength(1);
    expect(completed[0]!.data).toMatchObject({ id: c.id, status: "completed", stats: { total: 44, skipped: 2, pending: 0 } });
    // Sent messages emit the same events as single sends.
    expect(eventsOf(k.accountId, "message.sent").filter((e) => e.data.campaignId === c.id)).toHaveLength(42);
  });

  it("a completed campaign cannot start again (409); listing filters by status", async () => {
    const k = await createKey("pro");
    const s = await sandboxSession(k.key);
    const ct = await createContact(k.key, { phone: uniquePhone(), name: "Solo" });
    const c = await createCampaign(k.key, { sessionId: s.id, message: { text: "hi" }, audience: { contactIds: [ct.id] } });
    const draftOnly = await json<{ data: CampaignJson[] }>(await api("/api/campaigns?status=draft", { key: k.key }));
    expect(draftOnly.data.map((x) => x.id)).toEqual([c.id]);
    await action(k.key, c.id, "start");
    await watch(k.key, c.id, (x) => x.status === "completed");
    const again = await action(k.key, c.id, "start");
    expect(again.status).toBe(409);
    const list = await json<{ data: CampaignJson[] }>(await api("/api/campaigns?status=completed", { key: k.key }));
    expect(list.data.map((x) => x.id)).toEqual([c.id]);
    expect(list.data[0]!.stats).toMatchObject({ total: 1 });
  });
});

describe("campaigns: scheduling", () => {
  it("a scheduledAt in the future makes start schedule it; it fires at its time", async () => {
    const k = await createKey("pro");
    const s = await sandboxSession(k.key);
    const ct = await createContact(k.key, { phone: uniquePhone(), name: "Later" });
    const at = Date.now() + 2500;
    const c = await createCampaign(k.key, { sessionId: s.id, message: { text: "later, {{name}}" }, audience: { contactIds: [ct.id] }, scheduledAt: new Date(at).toISOString() });
    const scheduled = await json<CampaignJson>(await action(k.key, c.id, "start"));
    expect(scheduled).toMatchObject({ status: "scheduled", startedAt: null });
    const { last } = await watch(k.key, c.id, (x) => x.status === "completed", 15_000);
    const startedAt = Date.parse(last.startedAt!);
    expect(startedAt).toBeGreaterThanOrEqual(at - 50);
    // Fired by the session DO's alarm (no cron runs in this suite): at its time, give or take
    // a loaded machine's seconds.
    expect(startedAt - at).toBeLessThan(10_000);
  });
});

describe("campaigns: pause, resume, cancel", () => {
  async function pacedCampaign(n: number, perMinute: number) {
    const k = await createKey("pro");
    const s = await sandboxSession(k.key);
    await importContacts(k.key, Array.from({ length: n }, (_, i) => ({ phone: uniquePhone(), name: `P${i}`, tags: ["paced"] })));
    const c = await createCampaign(k.key, { sessionId: s.id, message: { text: "hello {{name}}" }, audience: { tags: ["paced"] }, pacing: { perMinute, jitterPct: 10 } });
    return { k, s, c };
  }
  const done = (x: CampaignJson) => x.stats.total - x.stats.skipped - x.stats.pending;

  it("pause stops sending within a second; resume continues where it stopped; nobody is sent twice", async () => {
    const { k, c } = await pacedCampaign(30, 600); // one send per 100 ms
    await action(k.key, c.id, "start");
    // Start is idempotent while running: nothing is resolved or sent twice.
    const again = await action(k.key, c.id, "start");
    expect(again.status).toBe(200);
    expect((await json<CampaignJson>(again)).stats.total).toBe(30);
    await watch(k.key, c.id, (x) => done(x) >= 5);
    const paused = await json<CampaignJson>(await action(k.key, c.id, "pause"));
    expect(paused.status).toBe("paused");
    await new Promise((r) => setTimeout(r, 1000));
    const settled = done(await getCampaign(k.key, c.id));
    await new Promise((r) => setTimeout(r, 1500));
    const later = await getCampaign(k.key, c.id);
    expect(done(later)).toBe(settled);
    expect(settled).toBeLessThan(30);
    expect(later.etaSeconds).toBeNull();
    const resumed = await json<CampaignJson>(await action(k.key, c.id, "resume"));
    expect(resumed.status).toBe("running");
    const { last } = await watch(k.key, c.id, (x) => x.status === "completed", 20_000);
    expect(done(last)).toBe(30);
    const count = await (await shardD1(k.accountId)).prepare("SELECT count(*) AS n, count(DISTINCT chat_id) AS chats FROM messages WHERE campaign_id = ?").bind(c.id).first<{ n: number; chats: number }>();
    expect(count).toEqual({ n: 30, chats: 30 });
  });

  it("cancel stops it: unsent recipients are skipped (cancelled), the stats still add up", async () => {
    const { k, c } = await pacedCampaign(30, 600);
    await action(k.key, c.id, "start");
    await watch(k.key, c.id, (x) => done(x) >= 3);
    const cancelled = await json<CampaignJson>(await action(k.key, c.id, "cancel"));
    expect(cancelled.status).toBe("cancelled");
    await new Promise((r) => setTimeout(r, 1000));
    const a = await getCampaign(k.key, c.id);
    await new Promise((r) => setTimeout(r, 1000));
    const b = await getCampaign(k.key, c.id);
    expect(done(b)).toBe(done(a));
    expect(b.stats.pending).toBe(0);
    expect(b.stats.skipped).toBe(30 - done(b));
    expect(b.stats.skipped).toBeGreaterThan(0);
    const rs = await recipients(k.key, c.id, "&status=skipped");
    expect(rs).toHaveLength(b.stats.skipped);
    expect(rs.every((r) => r.reason === "cancelled")).toBe(true);
    expect((await action(k.key, c.id, "resume")).status).toBe(409);
    const pending = await (await shardD1(k.accountId)).prepare("SELECT count(*) AS n FROM messages WHERE campaign_id = ? AND status = 'pending'").bind(c.id).first<{ n: number }>();
    expect(pending!.n).toBe(0);
  });
});

describe("campaigns: webhooks", () => {
  it("campaign.completed is delivered exactly once to a matching webhook, with the final stats", async () => {
    const k = await createKey("pro");
    const s = await sandboxSession(k.key);
    const hook = await registerWebhook(k, { events: ["campaign.completed"] });
    const other = await registerWebhook(k, { events: ["message.received"] });
    await importContacts(k.key, Array.from({ length: 25 }, (_, i) => ({ phone: uniquePhone(), name: `H${i}`, tags: ["hook"] })));
    const c = await createCampaign(k.key, { sessionId: s.id, message: { text: "hi {{name}}" }, audience: { tags: ["hook"] } });
    await action(k.key, c.id, "start");
    await watch(k.key, c.id, (x) => x.status === "completed");
    const got = await waitForDeliveries(hook.inbox, 1);
    await new Promise((r) => setTimeout(r, 1500));
    const all = await receivedAt(hook.inbox);
    expect(all).toHaveLength(1);
    expect(all[0]!.verified).toBe(true);
    const body = JSON.parse(got[0]!.body) as { type: string; data: CampaignJson };
    expect(body.type).toBe("campaign.completed");
    expect(body.data).toMatchObject({ id: c.id, status: "completed", stats: { total: 25, pending: 0, skipped: 0 } });
    expect(await receivedAt(other.inbox)).toHaveLength(0);
  });
});

describe("contacts import (for campaign audiences)", () => {
  it("creates valid contacts, rejects bad items by index, counts existing phones", async () => {
    const k = await createKey("pro");
    const existing = await createContact(k.key, { phone: uniquePhone(), name: "Already" });
    const fresh = uniquePhone();
    const res = await api("/api/contacts/import", {
      method: "POST",
      key: k.key,
      json: { contacts: [{ phone: fresh, name: "New", tags: ["t"] }, { phone: "nope" }, { phone: existing.phone, name: "Again" }, { phone: fresh }, { phone: uniquePhone(), extra: 1 }] },
    });
    expect(res.status).toBe(200);
    const body = await json<{ created: number; existing: number; rejected: { index: number }[] }>(res);
    expect(body).toMatchObject({ created: 1, existing: 2 });
    expect(body.rejected.map((r) => r.index)).toEqual([1, 4]);
    const list = await json<{ data: { name: string }[] }>(await api("/api/contacts?tag=t", { key: k.key }));
    expect(list.data.map((c) => c.name)).toEqual(["New"]);
    expect((await api("/api/contacts/import", { method: "POST", key: k.key, json: { contacts: [] } })).status).toBe(400);
  });
});
