import { expect } from "vitest";
import { api } from "../helpers.ts";
import { fakePhone, graphUrl, hubSignature, json, type SessionJson } from "./support.ts";

export const APP_SECRET = "app-secret-for-tests";
export const VERIFY = "verify-me";

/** The approved templates every fake business account starts with. */
export const FAKE_TEMPLATES = [
  { id: "1192339204654487", name: "hello_world", language: "en_US", status: "APPROVED", category: "UTILITY", components: [{ type: "BODY", text: "Welcome and congratulations!!" }], quality_score: { score: "GREEN" } },
  { id: "1192339204654488", name: "order_update", language: "en_US", status: "APPROVED", category: "UTILITY", components: [{ type: "BODY", text: "Hi {{1}}, your order has shipped.", example: { body_text: [["Ada"]] } }], quality_score: { score: "GREEN" } },
];

/** A business account of the fake Graph API with these templates: answers its id. */
export async function fakeWaba(token: string, templates: unknown[] = FAKE_TEMPLATES): Promise<string> {
  const wabaId = `1022${Date.now() % 1e8}${Math.floor(Math.random() * 1e4)}`;
  await fetch(`${graphUrl()}/__fake/wabas`, { method: "POST", body: JSON.stringify({ wabaId, token, templates }) });
  return wabaId;
}

/** A WORKING whatsapp session on a new number of the fake Graph API, with its business account (FAKE_TEMPLATES unless given). */
export async function whatsappSession(key: string, templates?: unknown[]) {
  const phone = await fakePhone("token-abc");
  const wabaId = await fakeWaba(phone.token, templates);
  const res = await api("/api/sessions", {
    method: "POST",
    key,
    json: { name: "wa", network: "whatsapp", whatsapp: { phoneNumberId: phone.phoneNumberId, businessAccountId: wabaId, accessToken: phone.token, appSecret: APP_SECRET, verifyToken: VERIFY } },
  });
  expect(res.status).toBe(201);
  return { phone, wabaId, session: await json<SessionJson>(res) };
}

/**
 * Fails the test unless Meta could send this payload: the fake Graph API checks it against the
 * reference document's webhook schema and the supplement for what the document leaves out (and a
 * failure is also recorded there, which fails the run at teardown).
 */
export async function expectRealShaped(payload: unknown): Promise<void> {
  const verdict = (await (await fetch(`${graphUrl()}/__fake/webhooks`, { method: "POST", body: JSON.stringify(payload) })).json()) as { errors: string[] };
  expect(verdict.errors, "a webhook payload Meta would not send").toEqual([]);
}

/** Posts a payload to the session's Meta webhook, signed as Meta signs it, after checking Meta could send it. */
export async function postHook(sessionId: string, payload: unknown, secret = APP_SECRET): Promise<Response> {
  await expectRealShaped(payload);
  return postHookUnchecked(sessionId, payload, secret);
}

/** Posts any payload, signed: for the hostile tests, which send what Meta never would. */
export async function postHookUnchecked(sessionId: string, payload: unknown, secret = APP_SECRET): Promise<Response> {
  const body = JSON.stringify(payload);
  return api(`/hooks/whatsapp/${sessionId}`, { method: "POST", body, headers: { "Content-Type": "application/json", "X-Hub-Signature-256": await hubSignature(secret, body) } });
}

/** A `messages` webhook of the Cloud API (`WebhookPayload`) whose one change value holds these fields beside the metadata. */
export function webhookWith(phoneNumberId: string, fields: Record<string, unknown>) {
  return {
    object: "whatsapp_business_account",
    entry: [
      {
        id: "419561257915477",
        changes: [{ field: "messages", value: { messaging_product: "whatsapp", metadata: { display_phone_number: "15550783881", phone_number_id: phoneNumberId }, ...fields } }],
      },
    ],
  };
}

/** A `messages` webhook of the Cloud API (`WebhookPayload`) carrying these message objects. */
export function webhookOf(phoneNumberId: string, messages: Record<string, unknown>[], name = "Sheena Nelson") {
  return webhookWith(phoneNumberId, { contacts: [{ profile: { name }, wa_id: String(messages[0]?.from ?? "16505551234") }], messages });
}

/** The "Text Message" example of the Cloud API webhook reference: one text from 16505551234. */
export function textWebhook(phoneNumberId: string, id: string, body = "Does it come in another color?") {
  return webhookOf(phoneNumberId, [{ from: "16505551234", id, timestamp: "1749416383", type: "text", text: { body } }]);
}

/** A `messages` webhook carrying these delivery statuses of messages sent to 16505551234. */
export function statusWebhook(phoneNumberId: string, statuses: { id: string; status: string; timestamp: number; errors?: unknown[] }[]) {
  return webhookWith(phoneNumberId, { statuses: statuses.map((s) => ({ ...s, timestamp: String(s.timestamp), recipient_id: "16505551234" })) });
}

/**
 * Each of these numbers writes to the session (a text through the signed webhook), which opens its
 * 24-hour customer-service window: free-form sends to it are then allowed.
 */
export async function openWindows(sessionId: string, phoneNumberId: string, numbers: string[], secret = APP_SECRET): Promise<void> {
  const now = Math.floor(Date.now() / 1000);
  const messages = numbers.map((n, i) => ({ from: n.replace(/\D/g, ""), id: `wamid.open-${sessionId}-${n.replace(/\D/g, "")}-${i}`, timestamp: String(now), type: "text", text: { body: "hello" } }));
  const res = await postHook(sessionId, webhookOf(phoneNumberId, messages), secret);
  expect(res.status).toBe(200);
}
