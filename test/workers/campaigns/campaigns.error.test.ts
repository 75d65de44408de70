import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { getDb } from "../../../src/db/client.ts";
import { campaigns } from "../../../src/db/schema/index.ts";
import { launch } from "../../../src/messaging/campaigns/audience.ts";
import { runCampaignJob, type CampaignJob } from "../../../src/messaging/campaigns/fanout.ts";
import { eq } from "drizzle-orm";
import { api, createKey, errorOf, shardDb, shardD1 } from "../helpers.ts";
import { eventsOf, fakeFail, fakePhone, json, sandboxSession, waitFor, type SessionJson } from "../messaging/support.ts";
import { openWindows } from "../messaging/whatsapp-support.ts";
import { action, createCampaign, createContact, getCampaign, importContacts, recipients, uniquePhone, watch, type CampaignJson } from "./support.ts";
import { accountShard } from "../../../src/platform/shards.ts";

describe("campaigns: invalid input", () => {
  it("an unknown template variable is a 400 at creation naming it", async () => {
    const k = await createKey("pro");
    const s = await sandboxSession(k.key);
    const res = await api("/api/campaigns", { method: "POST", key: k.key, json: { name: "x", sessionId: s.id, message: { text: "Hi {{nmae}}, {{attributes.city}}" }, audience: { all: true } } });
    expect(res.status).toBe(400);
    const err = await errorOf(res);
    expect(err.code).toBe("invalid_request");
    expect(err.message).toContain("{{nmae}}");
    expect((err.details as { issues: { path: string; message: string }[] }).issues[0]).toMatchObject({ path: "message.text" });
    const caption = await api("/api/campaigns", {
      method: "POST",
      key: k.key,
      json: { name: "x", sessionId: s.id, message: { type: "image", media: { url: "https://example.com/a.png" }, caption: "{{attributes}}" }, audience: { all: true } },
    });
    expect(caption.status).toBe(400);
    expect((await errorOf(caption)).message).toContain("{{attributes}}");
  });

  it.each([
    [{ audience: {} }, "audience"],
    [{ audience: { all: false } }, "audience.all"],
    [{ extra: 1 }, ""],
    [{ pacing: { perMinute: 0 } }, "pacing.perMinute"],
    [{ scheduledAt: "tomorrow" }, "scheduledAt"],
    [{ message: { text: "x", template: { name: "t", language: "en" } } }, "message"],
  ])("bad body %j is a 400", async (patch, path) => {
    const k = await createKey("pro");
    const s = await sandboxSession(k.key);
    const res = await api("/api/campaigns", { method: "POST", key: k.key, json: { name: "x", sessionId: s.id, message: { text: "hi" }, audience: { all: true }, ...patch } });
    expect(res.status).toBe(400);
    const issues = ((await errorOf(res)).details as { issues: { path: string }[] }).issues;
    expect(issues.some((i) => i.path.startsWith(path))).toBe(true);
  });

  it("unknown contact ids and sessions are 400s naming them", async () => {
    const k = await createKey("pro");
    const s = await sandboxSession(k.key);
    const res = await api("/api/campaigns", { method: "POST", key: k.key, json: { name: "x", sessionId: s.id, message: { text: "hi" }, audience: { contactIds: ["con_nope"] } } });
    expect(res.status).toBe(400);
    expect((await errorOf(res)).message).toContain("con_nope");
    const res2 = await api("/api/campaigns", { method: "POST", key: k.key, json: { name: "x", sessionId: "ses_nope", message: { text: "hi" }, audience: { all: true } } });
    expect(res2.status).toBe(400);
  });

  it("state conflicts are 409s: change after draft, pause a draft, start on a session that is not WORKING", async () => {
    const k = await createKey("pro");
    const s = await sandboxSession(k.key);
    const ct = await createContact(k.key, { phone: uniquePhone() });
    const c = await createCampaign(k.key, { sessionId: s.id, message: { text: "hi" }, audience: { contactIds: [ct.id] } });
    const put = await api(`/api/campaigns/${c.id}`, { method: "PUT", key: k.key, json: { name: "renamed", message: { text: "hello {{name|you}}" } } });
    expect(await json<CampaignJson>(put)).toMatchObject({ name: "renamed", message: { text: "hello {{name|you}}" } });
    expect((await action(k.key, c.id, "pause")).status).toBe(409);
    expect((await action(k.key, c.id, "resume")).status).toBe(409);
    await api(`/api/sessions/${s.id}`, { method: "DELETE", key: k.key });
    const start = await action(k.key, c.id, "start");
    expect(start.status).toBe(409);
    expect((await errorOf(start)).code).toBe("session_not_working");
    expect((await getCampaign(k.key, c.id)).status).toBe("draft");
    const cancel = await json<CampaignJson>(await action(k.key, c.id, "cancel"));
    expect(cancel.status).toBe("cancelled");
    const late = await api(`/api/campaigns/${c.id}`, { method: "PUT", key: k.key, json: { name: "again" } });
    expect(late.status).toBe(409);
    expect((await errorOf(late)).code).toBe("invalid_campaign_state");
    expect((await action(k.key, c.id, "start")).status).toBe(409);
  });

  it("Idempotency-Key on creation replays the first campaign", async () => {
    const k = await createKey("pro");
    const s = await sandboxSession(k.key);
    const body = { name: "once", sessionId: s.id, message: { text: "hi" }, audience: { all: true } };
    const headers = { "Idempotency-Key": `cmp-${Date.now()}` };
    const a = await json<CampaignJson>(await api("/api/campaigns", { method: "POST", key: k.key, json: body, headers }));
    const b = await json<CampaignJson>(await api("/api/campaigns", { method: "POST", key: k.key, json: body, headers }));
    expect(b.id).toBe(a.id);
    const list = await json<{ data: CampaignJson[] }>(await api("/api/campaigns", { key: k.key }));
    expect(list.data).toHaveLength(1);
  });
});

describe("campaigns: faults", () => {
  it("a consumer that dies after claiming, its retry and duplicate jobs: every recipient is sent exactly once", async () => {
    const k = await createKey("pro");
    const s = await sandboxSession(k.key);
    await importContacts(k.key, Array.from({ length: 150 }, (_, i) => ({ phone: uniquePhone(), name: `R${i}`, tags: ["retry"] })));
    const c = await createCampaign(k.key, { sessionId: s.id, message: { text: "once, {{name}}" }, audience: { tags: ["retry"] } });
    // Launch without the start route, so this test plays the queue consumer itself.
    const row = (await (await shardDb(k.accountId)).select().from(campaigns).where(eq(campaigns.id, c.id)).get())!;
    expect(await launch(await accountShard(env, k.accountId), row)).toEqual({ total: 150, skipped: 0 });
    const job = (from: number, to: number): CampaignJob => ({ kind: "campaign", accountId: k.accountId, campaignId: c.id, from, to });
    // The first delivery of block 1 claims its recipients, then dies before reaching the session.
    const broken = { ...env, SESSIONS: { getByName: () => { throw new Error("injected: consumer died"); } } } as unknown as Env;
    await expect(runCampaignJob(broken, job(1, 100))).rejects.toThrow("injected");
    const claimed = await (await shardD1(k.accountId)).prepare("SELECT count(*) AS n FROM campaign_recipients WHERE campaign_id = ? AND status = 'queued'").bind(c.id).first<{ n: number }>();
    expect(claimed!.n).toBe(100);
    const beforeRetry = await getCampaign(k.key, c.id);
    expect(beforeRetry.stats).toMatchObject({ pending: 150, sent: 0 });
    // The queue redelivers it (twice, concurrently), and block 2 arrives three times at once.
    await Promise.all([runCampaignJob(env, job(1, 100)), runCampaignJob(env, job(1, 100)), runCampaignJob(env, job(101, 200)), runCampaignJob(env, job(101, 200)), runCampaignJob(env, job(101, 200))]);
    const { last } = await watch(k.key, c.id, (x) => x.status === "completed");
    expect(last.stats.pending).toBe(0);
    expect(last.stats.sent + last.stats.delivered + last.stats.read).toBe(150);
    const count = await (await shardD1(k.accountId)).prepare("SELECT count(*) AS n, count(DISTINCT chat_id) AS chats FROM messages WHERE campaign_id = ?").bind(c.id).first<{ n: number; chats: number }>();
    expect(count).toEqual({ n: 150, chats: 150 });
    // One message.sent per message: nothing went out twice.
    const sentOf = () => eventsOf(k.accountId, "message.sent").filter((e) => e.data.campaignId === c.id);
    await waitFor(() => sentOf().length >= 150, 10_000, "message.sent events");
    await new Promise((r) => setTimeout(r, 500));
    expect(sentOf()).toHaveLength(150);
    expect(new Set(sentOf().map((e) => e.data.id)).size).toBe(150);
    // A late duplicate after completion changes nothing.
    await runCampaignJob(env, job(1, 100));
    const after = await (await shardD1(k.accountId)).prepare("SELECT count(*) AS n FROM messages WHERE campaign_id = ?").bind(c.id).first<{ n: number }>();
    expect(after!.n).toBe(150);
  });

  it("the session fails mid-run: the campaign pauses itself with the reason, and resumes when asked", async () => {
    const k = await createKey("pro");
    const phone = await fakePhone("right-token");
    const sres = await api("/api/sessions", {
      method: "POST",
      key: k.key,
      json: { network: "whatsapp", whatsapp: { phoneNumberId: phone.phoneNumberId, accessToken: "right-token", appSecret: "s", verifyToken: "v" } },
    });
    const session = await json<SessionJson>(sres);
    expect(session.status).toBe("WORKING");
    const phones = Array.from({ length: 12 }, () => uniquePhone());
    await importContacts(k.key, phones.map((phone, i) => ({ phone, name: `W${i}`, tags: ["wa"] })));
    // Free-form messages need each customer's 24-hour window open: they all wrote first.
    await openWindows(session.id, phone.phoneNumberId, phones, "s");
    const c = await createCampaign(k.key, { sessionId: session.id, message: { text: "hi {{name}}" }, audience: { tags: ["wa"] }, pacing: { perMinute: 600, jitterPct: 0 } });
    await action(k.key, c.id, "start");
    await watch(k.key, c.id, (x) => x.stats.sent + x.stats.delivered + x.stats.read >= 3);
    await fakeFail(phone.phoneNumberId, 190); // the token is revoked: the next send fails, the session goes FAILED
    const { last: paused } = await watch(k.key, c.id, (x) => x.status === "paused");
    expect(paused.statusReason).toBe("session_failed: invalid_token");
    await new Promise((r) => setTimeout(r, 800));
    const held = await getCampaign(k.key, c.id);
    expect(held.stats.failed).toBe(1);
    expect(held.stats.pending).toBeGreaterThan(0);
    const failed = await recipients(k.key, c.id, "&status=failed");
    expect(failed).toHaveLength(1);
    expect(failed[0]).toMatchObject({ reason: "invalid_token", error: { code: "invalid_token" } });
    const early = await action(k.key, c.id, "resume");
    expect(early.status).toBe(409);
    expect((await errorOf(early)).code).toBe("session_not_working");
    expect((await getCampaign(k.key, c.id)).stats).toEqual(held.stats);

    expect((await json<SessionJson>(await api(`/api/sessions/${session.id}/restart`, { method: "POST", key: k.key }))).status).toBe("WORKING");
    expect((await json<CampaignJson>(await action(k.key, c.id, "resume"))).status).toBe("running");
    const { last } = await watch(k.key, c.id, (x) => x.status === "completed");
    expect(last.stats.failed).toBe(1);
    expect(last.stats.pending).toBe(0);
    expect(last.stats.sent + last.stats.delivered + last.stats.read).toBe(11);
  });
});
