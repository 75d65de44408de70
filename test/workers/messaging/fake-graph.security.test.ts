// The fake Graph API rejects what Meta's reference does not allow, over HTTP as the driver reaches it: one
// deliberately wrong request per check, each on a hostile number (recorded, but failing nothing by itself), and
// the file teardown's own check shown failing on that traffic.
import { describe, expect, it } from "vitest";
import { expectNoInvalidGraphTraffic, invalidGraphTraffic } from "./graph-traffic.ts";
import { fakePhone, fakeRequests, graphUrl } from "./support.ts";
import { webhookOf } from "./whatsapp-support.ts";

const TEXT = { messaging_product: "whatsapp", recipient_type: "individual", to: "16505551234", type: "text", text: { body: "hi" } };

async function hostile(phoneNumberId?: string) {
  return fakePhone("tok", { hostile: true, ...(phoneNumberId ? { phoneNumberId } : {}) });
}

/** Sends one request to the fake and answers its status, Graph error code and what the fake recorded for it. */
async function call(phoneNumberId: string, method: string, path: string, init: { headers?: Record<string, string>; body?: unknown } = {}) {
  const res = await fetch(`${graphUrl()}${path}`, { method, headers: init.headers, body: init.body === undefined ? undefined : JSON.stringify(init.body) });
  const body = (await res.json()) as { error?: { code: number; message: string } };
  const recorded = (await fakeRequests(phoneNumberId)).at(-1);
  return { status: res.status, code: body.error?.code, recorded };
}

const JSON_AUTH = { authorization: "Bearer tok", "content-type": "application/json" };

describe("fake Graph API: each check fails a wrong request (Graph error 100, recorded as invalid)", () => {
  it("a path parameter of the operation: the version must be v<major>.<minor>, a phone number id digits", async () => {
    // The phone number's own GET constrains both (the send's path item declares them as any string).
    const p = await hostile();
    const version = await call(p.phoneNumberId, "GET", `/23.0/${p.phoneNumberId}?fields=display_phone_number`, { headers: { authorization: "Bearer tok" } });
    expect(version).toMatchObject({ status: 400, code: 100, recorded: { valid: false } });
    expect(version.recorded!.errors.join()).toMatch(/path parameter Version/);
    const letters = await hostile(`abc${Date.now()}`);
    const id = await call(letters.phoneNumberId, "GET", `/v23.0/${letters.phoneNumberId}?fields=display_phone_number`, { headers: { authorization: "Bearer tok" } });
    expect(id).toMatchObject({ status: 400, code: 100, recorded: { valid: false } });
    expect(id.recorded!.errors.join()).toMatch(/path parameter Phone-Number-ID/);
  });

  it("the operation is the one of the method and path: a GET or PUT of the send path is no operation", async () => {
    const p = await hostile();
    for (const method of ["GET", "PUT"]) {
      const r = await call(p.phoneNumberId, method, `/v23.0/${p.phoneNumberId}/messages`, { headers: JSON_AUTH, ...(method === "PUT" ? { body: TEXT } : {}) });
      expect(r).toMatchObject({ status: 400, code: 100, recorded: { valid: false } });
      expect(r.recorded!.errors.join()).toMatch(/no operation the fake serves/);
    }
  });

  it("the query: a parameter the operation does not declare", async () => {
    const p = await hostile();
    const r = await call(p.phoneNumberId, "POST", `/v23.0/${p.phoneNumberId}/messages?debug=all`, { headers: JSON_AUTH, body: TEXT });
    expect(r).toMatchObject({ status: 400, code: 100, recorded: { valid: false } });
    expect(r.recorded!.errors.join()).toMatch(/query parameter debug is not declared/);
  });

  it("the Authorization header: missing, or not a bearer token", async () => {
    const p = await hostile();
    const missing = await call(p.phoneNumberId, "POST", `/v23.0/${p.phoneNumberId}/messages`, { headers: { "content-type": "application/json" }, body: TEXT });
    expect(missing.recorded!.errors.join()).toMatch(/header Authorization is required/);
    const basic = await call(p.phoneNumberId, "POST", `/v23.0/${p.phoneNumberId}/messages`, { headers: { ...JSON_AUTH, authorization: "Basic dG9rOg==" }, body: TEXT });
    expect(basic).toMatchObject({ status: 400, code: 100, recorded: { valid: false } });
    expect(basic.recorded!.errors.join()).toMatch(/header Authorization/);
  });

  it("the Content-Type header of a send: JSON, not text", async () => {
    const p = await hostile();
    const r = await call(p.phoneNumberId, "POST", `/v23.0/${p.phoneNumberId}/messages`, { headers: { ...JSON_AUTH, "content-type": "text/plain" }, body: TEXT });
    expect(r).toMatchObject({ status: 400, code: 100, recorded: { valid: false } });
    expect(r.recorded!.errors.join()).toMatch(/header Content-Type/);
  });

  it("the body: a send without its recipient", async () => {
    const p = await hostile();
    const { to: _to, ...noRecipient } = TEXT;
    const r = await call(p.phoneNumberId, "POST", `/v23.0/${p.phoneNumberId}/messages`, { headers: JSON_AUTH, body: noRecipient });
    expect(r).toMatchObject({ status: 400, code: 100, recorded: { valid: false } });
  });

  it("the fake's own answer: one the operation does not declare is recorded as invalid", async () => {
    const p = await hostile();
    await fetch(`${graphUrl()}/__fake/phones/${p.phoneNumberId}/answer`, { method: "POST", body: JSON.stringify({ status: 200, body: { messages: "wamid.not-a-list" } }) });
    const r = await call(p.phoneNumberId, "POST", `/v23.0/${p.phoneNumberId}/messages`, { headers: JSON_AUTH, body: TEXT });
    expect(r.status).toBe(200);
    expect(r.recorded).toMatchObject({ valid: false });
    expect(r.recorded!.errors.join()).toMatch(/the fake's own answer: sendMessage answer 200/);
  });

  it("a webhook payload Meta would not send (a message without its content)", async () => {
    const p = await hostile();
    const payload = webhookOf(p.phoneNumberId, [{ from: "16505551234", id: "wamid.X", timestamp: "1749416383", type: "text" }]);
    const verdict = (await (await fetch(`${graphUrl()}/__fake/webhooks?hostile=1`, { method: "POST", body: JSON.stringify(payload) })).json()) as { ok: boolean; errors: string[] };
    expect(verdict.ok).toBe(false);
    expect((await invalidGraphTraffic([p.phoneNumberId])).map((r) => r.method)).toEqual(["WEBHOOK"]);
  });

  it("a valid request passes every check, and a number with only valid traffic passes the teardown", async () => {
    const p = await hostile();
    const r = await call(p.phoneNumberId, "POST", `/v23.0/${p.phoneNumberId}/messages`, { headers: JSON_AUTH, body: TEXT });
    expect(r).toMatchObject({ status: 200, recorded: { valid: true, errors: [] } });
    await expectNoInvalidGraphTraffic([p.phoneNumberId]);
  });

  it("the file's teardown check fails on a number that received an invalid request", async () => {
    const p = await hostile();
    await call(p.phoneNumberId, "POST", `/v23.0/${p.phoneNumberId}/messages`, { headers: { authorization: "Bearer tok" }, body: TEXT });
    await expect(expectNoInvalidGraphTraffic([p.phoneNumberId])).rejects.toThrow(/Cloud API reference does not allow/);
  });
});
