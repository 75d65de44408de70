import { describe, expect, it } from "vitest";
import { api, createKey } from "../helpers.ts";
import { json, sandboxSession } from "../messaging/support.ts";
import { action, createCampaign, createContact, getCampaign, uniquePhone, type CampaignJson } from "./support.ts";

describe("campaigns: accounts are isolated", () => {
  it("another account cannot see, start, change or list the campaign", async () => {
    const a = await createKey("pro");
    const b = await createKey("pro");
    const s = await sandboxSession(a.key);
    const ct = await createContact(a.key, { phone: uniquePhone(), name: "A's contact" });
    const c = await createCampaign(a.key, { sessionId: s.id, message: { text: "hi" }, audience: { contactIds: [ct.id] } });

    expect((await api(`/api/campaigns/${c.id}`, { key: b.key })).status).toBe(404);
    expect((await api(`/api/campaigns/${c.id}/recipients`, { key: b.key })).status).toBe(404);
    expect((await api(`/api/campaigns/${c.id}`, { method: "PUT", key: b.key, json: { name: "stolen" } })).status).toBe(404);
    for (const name of ["start", "pause", "resume", "cancel"] as const) expect((await action(b.key, c.id, name)).status).toBe(404);
    expect((await json<{ data: CampaignJson[] }>(await api("/api/campaigns", { key: b.key }))).data).toHaveLength(0);
    // Nothing changed.
    expect(await getCampaign(a.key, c.id)).toMatchObject({ status: "draft", name: "test", stats: { total: 0 } });
    // And A's campaign still runs for A.
    expect((await action(a.key, c.id, "start")).status).toBe(200);
  });

  it("a campaign cannot use another account's session or contacts", async () => {
    const a = await createKey("pro");
    const b = await createKey("pro");
    const sa = await sandboxSession(a.key);
    const sb = await sandboxSession(b.key);
    const ct = await createContact(a.key, { phone: uniquePhone() });
    const withSession = await api("/api/campaigns", { method: "POST", key: b.key, json: { name: "x", sessionId: sa.id, message: { text: "hi" }, audience: { all: true } } });
    expect(withSession.status).toBe(400);
    const withContacts = await api("/api/campaigns", { method: "POST", key: b.key, json: { name: "x", sessionId: sb.id, message: { text: "hi" }, audience: { contactIds: [ct.id] } } });
    expect(withContacts.status).toBe(400);
    // `all` and tags only ever reach the account's own contacts.
    const c = await createCampaign(b.key, { sessionId: sb.id, message: { text: "hi" }, audience: { all: true } });
    const started = await json<CampaignJson>(await action(b.key, c.id, "start"));
    expect(started.stats.total).toBe(0);
  });

  it("requires an API key", async () => {
    expect((await api("/api/campaigns")).status).toBe(401);
    expect((await api("/api/campaigns", { method: "POST", json: {} })).status).toBe(401);
  });
});
