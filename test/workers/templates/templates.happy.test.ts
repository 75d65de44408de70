import { describe, expect, it } from "vitest";
import { api, createKey } from "../helpers.ts";
import { eventsOf, fakeRequests, graphUrl, json, sandboxSession, waitFor, type MessageJson } from "../messaging/support.ts";
import { postHook, whatsappSession } from "../messaging/whatsapp-support.ts";
import { action, createCampaign, createContact, uniquePhone, watch } from "../campaigns/support.ts";
import { approvedSandboxTemplate, createTemplate, listTemplates, SHIPPING_PARAMS, shippingTemplate, type TemplateJson } from "./support.ts";

const waba = async (id: string) => (await (await fetch(`${graphUrl()}/__fake/wabas/${id}`)).json()) as { templates: { name: string; id: string; status: string }[]; requests: { method: string; path: string; body: unknown }[] };

function templateHook(wabaId: string, field: string, value: Record<string, unknown>) {
  return { object: "whatsapp_business_account", entry: [{ id: wabaId, time: Math.floor(Date.now() / 1000), changes: [{ field, value }] }] };
}

describe("templates on the sandbox", () => {
  it("a created template is PENDING, then APPROVED by the sandbox's review with template.updated; it is then listed and sendable", async () => {
    const k = await createKey("pro");
    const s = await sandboxSession(k.key);
    const res = await createTemplate(k.key, s.id, shippingTemplate("shipping_update"));
    expect(res.status).toBe(201);
    expect(await json(res)).toMatchObject({ name: "shipping_update", language: "en_US", status: "PENDING", category: "UTILITY", sessionId: s.id });
    const approved = await waitFor(() => eventsOf(k.accountId, "template.updated")[0], 10_000, "template.updated");
    expect(approved.data).toMatchObject({ name: "shipping_update", status: "APPROVED", quality: "UNKNOWN" });
    const list = await listTemplates(k.key, s.id);
    expect(list.data.map((t) => [t.name, t.status])).toEqual([["shipping_update", "APPROVED"]]);
    const sent = await api("/api/messages/send", { method: "POST", key: k.key, json: { sessionId: s.id, to: "+14155550123", template: { name: "shipping_update", language: "en_US", components: SHIPPING_PARAMS } } });
    expect(sent.status).toBe(201);
    expect(await json<MessageJson>(sent)).toMatchObject({ type: "template", status: "sent" });
  });

  it("bulk sends check each template item; a campaign is checked at creation and runs", async () => {
    const k = await createKey("pro");
    const s = await sandboxSession(k.key);
    await approvedSandboxTemplate(k.key, k.accountId, s.id, "promo_ready");
    const good = { to: "+14155550124", template: { name: "promo_ready", language: "en_US", components: SHIPPING_PARAMS } };
    const bulk = await json<{ accepted: number; rejected: { index: number; error: { code: string; message: string } }[] }>(
      await api("/api/messages/send-bulk", { method: "POST", key: k.key, json: { sessionId: s.id, messages: [good, { ...good, template: { name: "promo_ready", language: "en_US" } }, { to: "+14155550125", text: "plain" }] } }),
    );
    expect(bulk.accepted).toBe(2);
    expect(bulk.rejected).toEqual([{ index: 1, error: { code: "invalid_request", message: expect.stringContaining("header needs 1 parameter(s); 0 given") } }]);
    await createContact(k.key, { phone: uniquePhone(), tags: ["tpl"] });
    const c = await createCampaign(k.key, { sessionId: s.id, name: "tpl", message: { template: good.template }, audience: { tags: ["tpl"] } });
    expect((await action(k.key, c.id, "start")).status).toBe(200);
    const { last } = await watch(k.key, c.id, (x) => x.status === "completed");
    expect(last.stats.total).toBe(1);
  });

  it("delete removes one language or every language of a name", async () => {
    const k = await createKey("pro");
    const s = await sandboxSession(k.key);
    for (const language of ["en_US", "fr"]) expect((await createTemplate(k.key, s.id, { ...shippingTemplate("bye"), language })).status).toBe(201);
    const one = await api(`/api/sessions/${s.id}/templates/bye?language=fr`, { method: "DELETE", key: k.key });
    expect(await json(one)).toEqual({ name: "bye", deleted: 1 });
    expect((await listTemplates(k.key, s.id)).data.map((t) => t.language)).toEqual(["en_US"]);
    expect(await json(await api(`/api/sessions/${s.id}/templates/bye`, { method: "DELETE", key: k.key }))).toEqual({ name: "bye", deleted: 1 });
    expect((await listTemplates(k.key, s.id)).data).toEqual([]);
  });
});

describe("templates on WhatsApp (against the fake Graph API)", () => {
  it("the list is synced from the business account, every page, with quality; refresh brings changes; every request is valid", async () => {
    const k = await createKey("pro");
    const many = Array.from({ length: 130 }, (_, i) => ({ id: String(900000 + i), name: `t_${String(i).padStart(3, "0")}`, language: "en_US", status: i % 2 ? "APPROVED" : "REJECTED", category: "MARKETING", components: [{ type: "BODY", text: "x" }], quality_score: { score: "GREEN" }, rejected_reason: i % 2 ? "NONE" : "INVALID_FORMAT" }));
    const { wabaId, session, phone } = await whatsappSession(k.key, many);
    const list = await listTemplates(k.key, session.id);
    expect(list.data).toHaveLength(130);
    expect(list.pages).toBe(2);
    expect(list.syncedAt).toEqual(expect.any(String));
    const byName = (l: { data: TemplateJson[] }, name: string) => l.data.find((t) => t.name === name);
    expect(new Set(list.data.map((t) => t.name)).size).toBe(130);
    expect(byName(list, "t_000")).toMatchObject({ status: "REJECTED", rejectedReason: "INVALID_FORMAT", quality: "GREEN", networkId: "900000" });
    expect(byName(list, "t_001")).toMatchObject({ status: "APPROVED", rejectedReason: null });
    const gets = (await waba(wabaId)).requests.filter((r) => r.method === "GET");
    expect(gets).toHaveLength(2);
    expect(gets[1]!.path).toContain("after=");
    await fetch(`${graphUrl()}/__fake/wabas/${wabaId}/templates/t_000`, { method: "POST", body: JSON.stringify({ language: "en_US", status: "APPROVED" }) });
    expect(byName(await listTemplates(k.key, session.id), "t_000")!.status).toBe("REJECTED"); // cached
    expect(byName(await listTemplates(k.key, session.id, true), "t_000")!.status).toBe("APPROVED");
    expect((await fakeRequests(phone.phoneNumberId)).every((r) => r.valid)).toBe(true);
    const invalid = (await (await fetch(`${graphUrl()}/__fake/invalid`)).json()) as unknown[];
    expect(invalid.filter((r) => JSON.stringify(r).includes(wabaId))).toEqual([]);
  });

  it("create goes to Meta as PENDING; the three template webhooks update the row with template.updated; delete by language uses the hsm id", async () => {
    const k = await createKey("pro");
    const { wabaId, session } = await whatsappSession(k.key);
    const res = await createTemplate(k.key, session.id, shippingTemplate("ship_note"));
    expect(res.status).toBe(201);
    const created = await json<TemplateJson>(res);
    expect(created).toMatchObject({ status: "PENDING", networkId: expect.stringMatching(/^\d+$/) });
    const post = (await waba(wabaId)).requests.find((r) => r.method === "POST")!;
    expect(post.body).toMatchObject({ name: "ship_note", language: "en_US", category: "UTILITY" });
    const id = Number(created.networkId);
    const base = { message_template_id: id, message_template_name: "ship_note", message_template_language: "en_US" };
    expect((await postHook(session.id, templateHook(wabaId, "message_template_status_update", { ...base, event: "APPROVED", reason: "NONE" }))).status).toBe(200);
    expect((await postHook(session.id, templateHook(wabaId, "message_template_quality_update", { ...base, previous_quality_score: "UNKNOWN", new_quality_score: "YELLOW" }))).status).toBe(200);
    expect((await postHook(session.id, templateHook(wabaId, "template_category_update", { ...base, previous_category: "UTILITY", new_category: "MARKETING" }))).status).toBe(200);
    const updates = await waitFor(() => (eventsOf(k.accountId, "template.updated").length >= 3 ? eventsOf(k.accountId, "template.updated") : undefined), 10_000, "three template.updated");
    expect(updates.at(-1)!.data).toMatchObject({ name: "ship_note", status: "APPROVED", quality: "YELLOW", category: "MARKETING" });
    expect((await listTemplates(k.key, session.id)).data.find((t) => t.name === "ship_note")).toMatchObject({ status: "APPROVED", quality: "YELLOW", category: "MARKETING" });
    const del = await api(`/api/sessions/${session.id}/templates/ship_note?language=en_US`, { method: "DELETE", key: k.key });
    expect(await json(del)).toEqual({ name: "ship_note", deleted: 1 });
    const gone = (await waba(wabaId)).requests.find((r) => r.method === "DELETE")!;
    expect(gone.path).toContain(`hsm_id=${id}`);
    expect((await waba(wabaId)).templates.map((t) => t.name)).not.toContain("ship_note");
  });

  it("a rejection carries its reason", async () => {
    const k = await createKey("pro");
    const { wabaId, session } = await whatsappSession(k.key);
    await listTemplates(k.key, session.id);
    await postHook(session.id, templateHook(wabaId, "message_template_status_update", { event: "REJECTED", message_template_id: 1192339204654488, message_template_name: "order_update", message_template_language: "en_US", reason: "INCORRECT_CATEGORY" }));
    const t = (await listTemplates(k.key, session.id)).data.find((x) => x.name === "order_update");
    expect(t).toMatchObject({ status: "REJECTED", rejectedReason: "INCORRECT_CATEGORY" });
  });
});
