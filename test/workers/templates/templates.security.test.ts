import { describe, expect, it } from "vitest";
import { api, createKey } from "../helpers.ts";
import { json, sandboxSession } from "../messaging/support.ts";
import { postHook, postHookUnchecked, whatsappSession } from "../messaging/whatsapp-support.ts";
import { approvedSandboxTemplate, createTemplate, listTemplates, SHIPPING_PARAMS, shippingTemplate } from "./support.ts";

describe("templates: accounts and sessions are adversaries", () => {
  it("another account's session is 404 for list, create and delete, and its templates stay untouched", async () => {
    const a = await createKey("pro");
    const b = await createKey("pro");
    const s = await sandboxSession(a.key);
    expect((await createTemplate(a.key, s.id, shippingTemplate("mine"))).status).toBe(201);
    expect((await api(`/api/sessions/${s.id}/templates`, { key: b.key })).status).toBe(404);
    expect((await createTemplate(b.key, s.id, shippingTemplate("theirs"))).status).toBe(404);
    expect((await api(`/api/sessions/${s.id}/templates/mine`, { method: "DELETE", key: b.key })).status).toBe(404);
    expect((await listTemplates(a.key, s.id)).data.map((t) => t.name)).toEqual(["mine"]);
  });

  it("a template of one session cannot be sent from another session of the same account", async () => {
    const k = await createKey("pro");
    const s1 = await sandboxSession(k.key);
    const s2 = await sandboxSession(k.key);
    await approvedSandboxTemplate(k.key, k.accountId, s1.id, "only_s1");
    const res = await api("/api/messages/send", { method: "POST", key: k.key, json: { sessionId: s2.id, to: "+14155550123", template: { name: "only_s1", language: "en_US", components: SHIPPING_PARAMS } } });
    expect(res.status).toBe(400);
  });

  it("template webhooks of another business account, or naming no template, change nothing", async () => {
    const k = await createKey("pro");
    const { session } = await whatsappSession(k.key);
    await listTemplates(k.key, session.id);
    const other = { object: "whatsapp_business_account", entry: [{ id: "999999", time: 1, changes: [{ field: "message_template_status_update", value: { event: "DISABLED", message_template_id: 1192339204654487, message_template_name: "hello_world", message_template_language: "en_US" } }] }] };
    expect((await postHook(session.id, other)).status).toBe(200);
    const junk = { object: "whatsapp_business_account", entry: [{ id: "999999", changes: [{ field: "message_template_status_update", value: { event: ["x"], message_template_name: "y".repeat(10_000) } }] }] };
    expect((await postHookUnchecked(session.id, junk)).status).toBe(200);
    expect((await listTemplates(k.key, session.id)).data.find((t) => t.name === "hello_world")?.status).toBe("APPROVED");
  });

  it("hostile bodies are 400, never 5xx: huge text, deep examples, many components", async () => {
    const k = await createKey("pro");
    const s = await sandboxSession(k.key);
    const bodies = [
      { ...shippingTemplate("a"), components: Array.from({ length: 11 }, () => ({ type: "BODY", text: "x" })) },
      { ...shippingTemplate("a"), components: [{ type: "BODY", text: "x".repeat(5000) }] },
      { ...shippingTemplate("a"), components: [{ type: "BODY", text: "{{1}}", example: { body_text: [Array.from({ length: 101 }, () => "v")] } }] },
      { ...shippingTemplate("a"), components: [{ type: "BODY", text: "x", unknown: { deep: [[[[]]]] } }] },
      { ...shippingTemplate("a"), name: "../../x" },
      // Each part within its own bound, the whole over 16 KiB.
      { ...shippingTemplate("a"), components: [{ type: "BODY", text: "b".repeat(1000) }, ...Array.from({ length: 5 }, () => ({ type: "HEADER", text: "h".repeat(4000) }))] },
    ];
    for (const b of bodies) expect((await createTemplate(k.key, s.id, b)).status).toBe(400);
    const longName = await api(`/api/sessions/${s.id}/templates/${"n".repeat(600)}`, { method: "DELETE", key: k.key });
    expect(longName.status).toBe(400);
    expect((await json<{ data: unknown[] }>(await api(`/api/sessions/${s.id}/templates`, { key: k.key }))).data).toEqual([]);
  });
});
