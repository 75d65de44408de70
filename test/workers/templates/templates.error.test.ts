import { describe, expect, it } from "vitest";
import { api, createKey, errorOf } from "../helpers.ts";
import { fakePhone, json, sandboxSession } from "../messaging/support.ts";
import { APP_SECRET, VERIFY, whatsappSession } from "../messaging/whatsapp-support.ts";
import { createCampaign } from "../campaigns/support.ts";
import { approvedSandboxTemplate, createTemplate, SHIPPING_PARAMS, shippingTemplate } from "./support.ts";

const base = shippingTemplate("rules_check");
const body = (text: string) => ({ type: "BODY", text });

describe("templates: Meta's rules are checked before anything reaches the network", () => {
  it.each([
    [{ ...base, name: "Order Update" }, "name", "lowercase letters, digits and underscores"],
    [{ ...base, name: "x".repeat(513) }, "name", ""],
    [{ ...base, language: "english" }, "language", "language code"],
    [{ ...base, category: "PROMO" }, "category", ""],
    [{ ...base, components: [{ type: "HEADER", text: "a" }] }, "components", "exactly one BODY"],
    [{ ...base, components: [body("a"), body("b")] }, "components", "exactly one BODY"],
    [{ ...base, components: [{ type: "HEADER", text: "a" }, { type: "HEADER", text: "b" }, body("x")] }, "components", "at most one HEADER"],
    [{ ...base, components: [body("x".repeat(1025))] }, "components.0.text", "at most 1024 characters"],
    [{ ...base, components: [body("x"), { type: "FOOTER", text: "f".repeat(61) }] }, "components.1.text", "at most 60 characters"],
    [{ ...base, components: [{ type: "HEADER", format: "TEXT", text: "h".repeat(61) }, body("x")] }, "components.0.text", "at most 60 characters"],
    [{ ...base, components: [{ ...body("Hi {{1}} and {{3}}"), example: { body_text: [["a", "b"]] } }] }, "components.0.text", "sequential from {{1}}"],
    [{ ...base, components: [body("Hi {{1}}")] }, "components.0.example.body_text", "need 1 example value"],
    [{ ...base, components: [{ ...body("Hi {{name}}"), example: { body_text: [["a"]] } }] }, "components.0.text", "positional"],
    [{ ...base, components: [body("x"), { type: "FOOTER", text: "{{1}}" }] }, "components.1.text", "cannot have parameters"],
    [{ ...base, components: [body("x"), { type: "BUTTONS", buttons: Array.from({ length: 11 }, () => ({ type: "QUICK_REPLY", text: "b" })) }] }, "components.1.buttons", "1 to 10 buttons"],
    [{ ...base, components: [body("x"), { type: "BUTTONS", buttons: [1, 2, 3].map(() => ({ type: "URL", text: "u", url: "https://e.com" })) }] }, "components.1.buttons", "at most 2 URL buttons"],
    [{ ...base, components: [body("x"), { type: "BUTTONS", buttons: [{ type: "QUICK_REPLY", text: "t".repeat(26) }] }] }, "components.1.buttons.0.text", "at most 25 characters"],
    [{ ...base, components: [body("x"), { type: "BUTTONS", buttons: [{ type: "URL", text: "u", url: "https://e.com/{{1}}/x" }] }] }, "components.1.buttons.0.url", "at the end of its url"],
    [{ ...base, components: [body("x"), { type: "BUTTONS", buttons: [{ type: "OTP", otp_type: "COPY_CODE" }] }] }, "components.1.buttons", "only for AUTHENTICATION"],
  ])("%# is a 400 naming the rule", async (tpl, path, words) => {
    const k = await createKey("pro");
    const s = await sandboxSession(k.key);
    const res = await createTemplate(k.key, s.id, tpl);
    expect(res.status).toBe(400);
    const e = (await json<{ error: { code: string; message: string; details: { issues: { path: string; message: string }[] } } }>(res)).error;
    expect(e.code).toBe("invalid_request");
    expect(e.details.issues.some((i) => i.path === path && i.message.includes(words))).toBe(true);
  });

  it("a name and language that exist already is 409 template_exists", async () => {
    const k = await createKey("pro");
    const s = await sandboxSession(k.key);
    expect((await createTemplate(k.key, s.id, base)).status).toBe(201);
    const again = await createTemplate(k.key, s.id, base);
    expect(again.status).toBe(409);
    expect((await errorOf(again)).code).toBe("template_exists");
  });

  it("a whatsapp session without businessAccountId answers 409 business_account_unknown", async () => {
    const k = await createKey("pro");
    const phone = await fakePhone("token-abc");
    const s = await json<{ id: string }>(await api("/api/sessions", { method: "POST", key: k.key, json: { network: "whatsapp", whatsapp: { phoneNumberId: phone.phoneNumberId, accessToken: phone.token, appSecret: APP_SECRET, verifyToken: VERIFY } } }));
    const res = await api(`/api/sessions/${s.id}/templates?refresh=1`, { key: k.key });
    expect(res.status).toBe(409);
    expect((await errorOf(res)).code).toBe("business_account_unknown");
    // Its template sends cannot be checked, so they go to Meta as they did before templates were known.
    const send = await api("/api/messages/send", { method: "POST", key: k.key, json: { sessionId: s.id, to: "+14155550142", template: { name: "anything_meta_has", language: "en_US" } } });
    expect(send.status).toBe(201);
  });

  it("Meta refusing a create is 422 with its reason, nothing cached", async () => {
    const k = await createKey("pro");
    const { session } = await whatsappSession(k.key, [{ id: "77", name: "dup", language: "en_US", status: "APPROVED", category: "UTILITY", components: [] }]);
    const res = await createTemplate(k.key, session.id, { ...base, name: "dup" });
    expect(res.status).toBe(422);
    expect((await errorOf(res)).message).toContain("already exists");
  });
});

describe("template sends are checked against the synced template", () => {
  const send = (key: string, sessionId: string, template: unknown) => api("/api/messages/send", { method: "POST", key, json: { sessionId, to: "+14155550123", template } });

  it("unknown name or language 400; PENDING 409 template_not_approved; missing or extra parameters 400 naming the part", async () => {
    const k = await createKey("pro");
    const s = await sandboxSession(k.key);
    const unknown = await send(k.key, s.id, { name: "nope", language: "en_US" });
    expect(unknown.status).toBe(400);
    expect((await errorOf(unknown)).message).toContain("no template nope in en_US");
    expect((await createTemplate(k.key, s.id, shippingTemplate("later"))).status).toBe(201);
    const pending = await send(k.key, s.id, { name: "later", language: "en_US", components: SHIPPING_PARAMS });
    expect(pending.status).toBe(409);
    expect(await errorOf(pending)).toMatchObject({ code: "template_not_approved", status: "PENDING" });
    await approvedSandboxTemplate(k.key, k.accountId, s.id, "ready");
    expect((await send(k.key, s.id, { name: "ready", language: "fr", components: SHIPPING_PARAMS })).status).toBe(400);
    const missing = await send(k.key, s.id, { name: "ready", language: "en_US", components: SHIPPING_PARAMS.slice(0, 2) });
    expect(missing.status).toBe(400);
    expect((await errorOf(missing)).message).toContain("button 0 needs 1 parameter(s); 0 given");
    const extra = await send(k.key, s.id, { name: "ready", language: "en_US", components: [...SHIPPING_PARAMS.slice(0, 1), { type: "body", parameters: [1, 2, 3].map((n) => ({ type: "text", text: String(n) })) }, SHIPPING_PARAMS[2]] });
    expect(extra.status).toBe(400);
    expect((await errorOf(extra)).message).toContain("body takes 2 parameter(s); 3 given (1 extra)");
    expect((await send(k.key, s.id, { name: "ready", language: "en_US", components: SHIPPING_PARAMS })).status).toBe(201);
  });

  it("a campaign naming an unknown template is refused at creation; one whose template is no longer approved at start", async () => {
    const k = await createKey("pro");
    const { session, wabaId } = await whatsappSession(k.key);
    const bad = await api("/api/campaigns", { method: "POST", key: k.key, json: { sessionId: session.id, name: "x", message: { template: { name: "nope", language: "en_US" } }, audience: { all: true } } });
    expect(bad.status).toBe(400);
    expect((await errorOf(bad)).message).toContain("message.template");
    const c = await createCampaign(k.key, { sessionId: session.id, name: "y", message: { template: { name: "hello_world", language: "en_US" } }, audience: { all: true } });
    const { graphUrl } = await import("../messaging/support.ts");
    await fetch(`${graphUrl()}/__fake/wabas/${wabaId}/templates/hello_world`, { method: "POST", body: JSON.stringify({ language: "en_US", status: "PAUSED" }) });
    await api(`/api/sessions/${session.id}/templates?refresh=1`, { key: k.key });
    const start = await api(`/api/campaigns/${c.id}/start`, { method: "POST", key: k.key });
    expect(start.status).toBe(409);
    expect(await errorOf(start)).toMatchObject({ code: "template_not_approved", status: "PAUSED" });
  });
});
