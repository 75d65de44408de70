// The fake Graph API's checks: what it rejects, so a test passing through it means something.
import { readFileSync } from "node:fs";
import { parse } from "yaml";
import { describe, expect, it } from "vitest";
import { REFERENCE } from "../support/fake-graph-setup.ts";
import { GraphValidator, type GraphRequest } from "../support/graph-validator.ts";

const v = new GraphValidator(REFERENCE);
const AUTH = { authorization: "Bearer token-abc" };

function req(method: string, pathAndQuery: string, headers: Record<string, string> = AUTH, body?: unknown): GraphRequest {
  const url = new URL(pathAndQuery, "http://fake");
  return { method, path: url.pathname, query: url.searchParams, headers, body };
}

const text = { messaging_product: "whatsapp", recipient_type: "individual", to: "16505551234", type: "text", text: { body: "hi" } };
const meta = { display_phone_number: "15550783881", phone_number_id: "106540352242922" };
const hook = (field: string, value: unknown) => ({ object: "whatsapp_business_account", entry: [{ id: "419561257915477", changes: [{ field, value }] }] });
const messages = (m: Record<string, unknown>, contacts: unknown[] = [{ profile: { name: "Sheena" }, wa_id: "16505551234" }]) =>
  hook("messages", { messaging_product: "whatsapp", metadata: meta, contacts, messages: [{ id: "wamid.A", timestamp: "1749416383", ...m }] });

describe("fake Graph API: requests are checked against the one operation they are for", () => {
  it("a path fitting several operations is invalid unless the fake names the one it serves", () => {
    const r = req("GET", "/v23.0/106540352242922?fields=display_phone_number");
    expect(v.validate(r).ok).toBe(false);
    expect(v.validate(r).errors[0]).toMatch(/several operations/);
    expect(v.validate(r, "getPhoneNumberById")).toMatchObject({ ok: true, errors: [] });
  });

  it("the operation's own path parameters decide: a phone number id is digits", () => {
    expect(v.validate(req("GET", "/v23.0/not-a-number"), "getPhoneNumberById").errors.join()).toMatch(/Phone-Number-ID/);
    expect(v.validate(req("GET", "/23.0/106540352242922"), "getPhoneNumberById").errors.join()).toMatch(/Version/);
  });

  it("a query parameter the operation does not declare is invalid (fields is the phone number's, not the media's)", () => {
    expect(v.validate(req("GET", "/v23.0/1003383421387256?fields=url"), "retrieveMediaUrl").errors.join()).toMatch(/query parameter fields is not declared/);
    expect(v.validate(req("GET", "/v23.0/1003383421387256?phone_number_id=106540352242922"), "retrieveMediaUrl").ok).toBe(true);
  });

  it("headers: the bearer token is required, and a send needs its JSON content type", () => {
    expect(v.validate(req("GET", "/v23.0/1003383421387256", {}), "retrieveMediaUrl").errors.join()).toMatch(/header Authorization is required/);
    expect(v.validate(req("GET", "/v23.0/1003383421387256", { authorization: "Basic abc" }), "retrieveMediaUrl").errors.join()).toMatch(/Authorization/);
    expect(v.validate(req("POST", "/v23.0/106540352242922/messages", AUTH, text), "sendMessage").errors.join()).toMatch(/header Content-Type is required/);
    expect(v.validate(req("POST", "/v23.0/106540352242922/messages", { ...AUTH, "content-type": "text/plain" }, text), "sendMessage").ok).toBe(false);
    expect(v.validate(req("POST", "/v23.0/106540352242922/messages", { ...AUTH, "content-type": "application/json" }, text), "sendMessage")).toMatchObject({ ok: true });
  });

  it("the body is checked against the operation's schema", () => {
    const { to: _to, ...bad } = text;
    expect(v.validate(req("POST", "/v23.0/106540352242922/messages", { ...AUTH, "content-type": "application/json" }, bad), "sendMessage").ok).toBe(false);
  });

  it("a send to a BSUID names it in `recipient` instead of `to`: a well-formed one, never both, the rest as the document's send", () => {
    const { to: _to, ...rest } = text;
    const send = (body: unknown) => v.validate(req("POST", "/v23.0/106540352242922/messages", { ...AUTH, "content-type": "application/json" }, body), "sendMessage");
    expect(send({ ...rest, recipient: "US.13491208655302741918" })).toMatchObject({ ok: true });
    expect(send({ ...rest, recipient: "US.13491208655302741918", to: "16505551234" }).ok).toBe(false);
    expect(send({ ...rest, recipient: "16505551234" }).ok).toBe(false);
    expect(send({ ...rest, recipient: "US.13491208655302741918", text: { body: "hi", extra: 1 } }).ok).toBe(false);
  });

  it("the fake's answers are checked: the document has a media's file_size as a string, an error as GraphAPIError", () => {
    expect(v.validateResponse("retrieveMediaUrl", 200, { url: "http://x/cdn/1", file_size: 20 }).ok).toBe(false);
    expect(v.validateResponse("retrieveMediaUrl", 200, { url: "http://x/cdn/1", file_size: "20" }).ok).toBe(true);
    expect(v.validateResponse("sendMessage", 400, { error: { message: "x", type: "OAuthException" } }).errors.join()).toMatch(/code/);
    expect(v.validateResponse("sendMessage", 200, { messages: "wamid" }).ok).toBe(false);
  });
});

describe("fake Graph API: webhook payloads are checked against the document's webhook schema and its supplement", () => {
  // The document's group examples contradict its own group schema (string timestamps, numeric ids, a field
  // name not in its enum); groups are not a feature here, so they are left out rather than loosened.
  const SELF_CONTRADICTORY = ["Group Create Message", "Group Settings Update", "Group Remove Participants"];

  it("every (non-group) example of the document's own webhook endpoint validates (its schema names repaired)", { timeout: 60_000 }, () => {
    const doc = parse(readFileSync(REFERENCE, "utf8"), { maxAliasCount: -1 }) as { paths: Record<string, { post: { requestBody: { content: Record<string, { examples: Record<string, { value: unknown }> }> } } }> };
    const examples = Object.entries(doc.paths["/whatsapp/webhooks"]!.post.requestBody.content["application/json"]!.examples);
    expect(examples.length).toBeGreaterThan(10);
    for (const [name, ex] of examples.filter(([n]) => !SELF_CONTRADICTORY.includes(n))) expect([name, v.validateWebhook(ex.value).errors]).toEqual([name, []]);
  });

  it("a message the document describes must have its content; a send body is not a webhook", () => {
    expect(v.validateWebhook(messages({ from: "16505551234", type: "text", text: { body: "hi" } })).ok).toBe(true);
    expect(v.validateWebhook(messages({ from: "16505551234", type: "text" })).ok).toBe(false);
    expect(v.validateWebhook(messages({ from: "16505551234", type: "text", text: { body: 1 } })).ok).toBe(false);
    expect(v.validateWebhook(hook("messages", { messaging_product: "whatsapp", metadata: meta, contacts: [], messages: [text] })).ok).toBe(false);
  });

  it("business-scoped user ids: a sender known only by its BSUID", () => {
    const bsuidOnly = messages({ from_user_id: "US.13491208655302741918", type: "text", text: { body: "hi" } }, [{ profile: { name: "Sheena", username: "@sheena" }, user_id: "US.13491208655302741918" }]);
    expect(v.validateWebhook(bsuidOnly).errors).toEqual([]);
    expect(v.validateWebhook(messages({ from_user_id: "not a bsuid", type: "text", text: { body: "hi" } })).ok).toBe(false);
    expect(v.validateWebhook(messages({ type: "text", text: { body: "hi" } })).ok).toBe(false);
  });

  it("edits, revokes and the identity system messages", () => {
    expect(v.validateWebhook(messages({ from: "16505551234", type: "edit", edit: { original_message_id: "wamid.O", message: { type: "text", text: { body: "new" } } } })).errors).toEqual([]);
    expect(v.validateWebhook(messages({ from: "16505551234", type: "edit", edit: { message: { type: "text", text: { body: "new" } } } })).ok).toBe(false);
    expect(v.validateWebhook(messages({ from: "16505551234", type: "revoke", revoke: { original_message_id: "wamid.O" } })).errors).toEqual([]);
    expect(v.validateWebhook(messages({ from: "16505551234", type: "revoke" })).ok).toBe(false);
    const system = hook("messages", { messaging_product: "whatsapp", metadata: meta, messages: [{ from: "16505551234", id: "wamid.S", timestamp: "1750269342", type: "system", system: { body: "User A changed from 16505551234 to 12195555358", wa_id: "12195555358", type: "user_changed_number" } }] });
    expect(v.validateWebhook(system).errors).toEqual([]);
  });

  it("the other fields a subscribed app receives, and none it does not", () => {
    expect(v.validateWebhook(hook("account_update", { event: "ACCOUNT_RESTRICTION", restriction_info: [{ restriction_type: "RESTRICTED_BIZ_INITIATED_MESSAGING", expiration: "2026-04-19T13:59:20+0000" }] })).errors).toEqual([]);
    expect(v.validateWebhook(hook("message_template_status_update", { event: "APPROVED", message_template_id: 920070352646140, message_template_name: "order_update", message_template_language: "en_US", reason: null })).errors).toEqual([]);
    expect(v.validateWebhook(hook("message_template_status_update", { event: "APPROVED", message_template_name: "order_update" })).ok).toBe(false);
    const prefs = { messaging_product: "whatsapp", metadata: meta, user_preferences: [{ wa_id: "16505551234", detail: "User requested to stop marketing messages", category: "marketing_messages", value: "stop", timestamp: 1731705721 }] };
    expect(v.validateWebhook(hook("user_preferences", prefs)).errors).toEqual([]);
    expect(v.validateWebhook(hook("user_preferences", { ...prefs, user_preferences: [{ ...prefs.user_preferences[0], value: "maybe" }] })).ok).toBe(false);
    expect(v.validateWebhook(hook("made_up_field", { anything: true })).ok).toBe(false);
    expect(v.validateWebhook({ object: "page", entry: [] }).ok).toBe(false);
  });
});
