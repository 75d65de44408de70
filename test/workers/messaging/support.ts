import { expect, inject } from "vitest";
import type { DomainEvent } from "../../../src/events/types.ts";
import { seenEvents as seen } from "../event-tap.ts";
import { api } from "../helpers.ts";
import { filePhones } from "./graph-traffic.ts";

export function eventsOf(accountId: string, type?: string): DomainEvent[] {
  return seen.filter((e) => e.accountId === accountId && (!type || e.type === type));
}

export async function waitFor<T>(fn: () => Promise<T | undefined | null | false> | T | undefined | null | false, timeoutMs = 10_000, what = "condition"): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export async function json<T = Record<string, unknown>>(res: Response): Promise<T> {
  return (await res.json()) as T;
}

export interface SessionJson {
  id: string;
  status: string;
  statusReason: string | null;
  phoneNumber: string | null;
  me: { chatId: string } | null;
  network: string;
  [k: string]: unknown;
}

export interface MessageJson {
  id: string;
  status: string;
  chatId: string;
  sessionId: string;
  direction: string;
  type: string;
  text?: string;
  error?: { code: string; message: string };
  sentAt: string | null;
  deliveredAt: string | null;
  readAt: string | null;
  [k: string]: unknown;
}

export async function sandboxSession(key: string, extra: Record<string, unknown> = {}): Promise<SessionJson> {
  const res = await api("/api/sessions", { method: "POST", key, json: { name: "sbx", ...extra } });
  if (res.status !== 201) throw new Error(`session create ${res.status}: ${await res.text()}`);
  return json<SessionJson>(res);
}

/** A template without parameters, as the sandbox reviews it (approved after SANDBOX_TEMPLATE_APPROVAL_MS). */
export const SANDBOX_TEMPLATE = { name: "order_update", language: "en_US" };

/** Creates SANDBOX_TEMPLATE on a sandbox session and waits for its review to approve it. */
export async function approvedTemplate(key: string, sessionId: string): Promise<void> {
  const res = await api(`/api/sessions/${sessionId}/templates`, { method: "POST", key, json: { ...SANDBOX_TEMPLATE, category: "UTILITY", components: [{ type: "BODY", text: "Your order has shipped." }] } });
  expect(res.status).toBe(201);
  await waitFor(async () => {
    const list = await json<{ data: { name: string; status: string }[] }>(await api(`/api/sessions/${sessionId}/templates`, { key }));
    return list.data.some((t) => t.name === SANDBOX_TEMPLATE.name && t.status === "APPROVED");
  }, 10_000, "the template approved");
}

/** A text sent with POST /api/messages/send, which must accept it (201): the message as answered. */
export async function sendText(key: string, sessionId: string, to: string, text: string): Promise<MessageJson> {
  const res = await api("/api/messages/send", { method: "POST", key, json: { sessionId, to, text } });
  if (res.status !== 201) throw new Error(`send ${res.status}: ${await res.text()}`);
  return json<MessageJson>(res);
}

export async function getMessage(key: string, chatId: string, id: string, sessionId?: string): Promise<MessageJson | undefined> {
  const res = await api(`/api/messages/${chatId}?limit=100${sessionId ? `&sessionId=${sessionId}` : ""}`, { key });
  const page = await json<{ data: MessageJson[] }>(res);
  return page.data.find((m) => m.id === id);
}

// ---- fake Graph API -----------------------------------------------------------------------------

export const graphUrl = () => inject("graphUrl");

let phoneCounter = 0;
/**
 * A number of the fake Graph API. Its traffic is checked when the file ends (test/workers/setup.ts); a `hostile`
 * one is for sending invalid requests on purpose (its traffic is listed but fails nothing by itself).
 */
export async function fakePhone(token = "good-token", opts: { hostile?: boolean; phoneNumberId?: string } = {}): Promise<{ phoneNumberId: string; display: string; token: string }> {
  phoneCounter++;
  const phoneNumberId = opts.phoneNumberId ?? `10654${Date.now() % 1e7}${phoneCounter}${Math.floor(Math.random() * 1000)}`;
  const display = `1555${String(Math.floor(Math.random() * 1e7)).padStart(7, "0")}`;
  await fetch(`${graphUrl()}/__fake/phones`, { method: "POST", body: JSON.stringify({ phoneNumberId, token, hostile: opts.hostile === true, displayPhoneNumber: `+1 ${display.slice(1, 4)}-${display.slice(4)}` }) });
  if (!opts.hostile) filePhones.add(phoneNumberId);
  return { phoneNumberId, display, token };
}

export async function fakeFail(phoneNumberId: string, code: number, times = 1): Promise<void> {
  await fetch(`${graphUrl()}/__fake/phones/${phoneNumberId}/fail`, { method: "POST", body: JSON.stringify({ code, times }) });
}

/** The next `times` sends reach the fake but get no answer: held open (`hang`) or the connection closed (`drop`). */
export async function fakeStall(phoneNumberId: string, mode: "hang" | "drop", times = 1): Promise<void> {
  await fetch(`${graphUrl()}/__fake/phones/${phoneNumberId}/stall`, { method: "POST", body: JSON.stringify({ mode, times }) });
}

export interface FakeRequest {
  method: string;
  path: string;
  authorization: string | null;
  body: Record<string, unknown> | null;
  valid: boolean;
  errors: string[];
}

export async function fakeRequests(phoneNumberId: string): Promise<FakeRequest[]> {
  return (await (await fetch(`${graphUrl()}/__fake/phones/${phoneNumberId}/requests`)).json()) as FakeRequest[];
}

export async function hubSignature(secret: string, body: string): Promise<string> {
  const key = await crypto.subtle.importKey("raw", new TextEncoder().encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(body)));
  return `sha256=${[...mac].map((b) => b.toString(16).padStart(2, "0")).join("")}`;
}

/** A file on the fake Graph API (a customer's upload): answers its id. */
export async function fakeMedia(phoneNumberId: string, bytes: Uint8Array, mimetype: string, opts: { failTimes?: number; public?: boolean } = {}): Promise<string> {
  const mediaId = `${Date.now()}${Math.floor(Math.random() * 1e6)}`;
  const data = toBase64(bytes);
  await fetch(`${graphUrl()}/__fake/media`, { method: "POST", body: JSON.stringify({ mediaId, phoneNumberId, mimetype, data, ...opts }) });
  return mediaId;
}

export async function fakeMediaDownloads(mediaId: string): Promise<number> {
  return ((await (await fetch(`${graphUrl()}/__fake/media/${mediaId}`)).json()) as { downloads: number }).downloads;
}

export function toBase64(bytes: Uint8Array): string {
  let bin = "";
  for (let i = 0; i < bytes.length; i += 0x8000) bin += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(bin);
}

/** What `downloadMedia` got: the file's status, bytes and headers, or the API's error code. */
export interface Downloaded {
  status: number;
  bytes?: Uint8Array;
  type?: string | null;
  headers?: Headers;
  code?: string;
}

/** GET /api/messages/{id}/media, then the signed URL it redirects to. */
export async function downloadMedia(key: string, id: string): Promise<Downloaded> {
  const res = await api(`/api/messages/${id}/media`, { key, redirect: "manual" });
  if (res.status !== 302) return { status: res.status, code: ((await res.json()) as { error: { code: string } }).error.code };
  const location = new URL(res.headers.get("Location")!);
  expect(location.pathname).toMatch(/^\/hooks\/media\/med_/);
  expect(location.searchParams.get("exp")).toMatch(/^\d+$/);
  const file = await api(location.pathname + location.search);
  return { status: file.status, bytes: new Uint8Array(await file.arrayBuffer()), type: file.headers.get("content-type"), headers: file.headers };
}
