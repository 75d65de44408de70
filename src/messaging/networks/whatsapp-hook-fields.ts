import { NetworkError, Pricing, Referral, type Content } from "../messages/content.ts";
import type { SessionHealth } from "../sessions/schemas.ts";
import type { ContactIdentity } from "../contacts/schemas.ts";
import { BSUID } from "../chat-id.ts";
import type { CallFromNetwork, EchoFromNetwork, IdentityNotice } from "./driver.ts";
import { inboundBody } from "./whatsapp-inbound.ts";

/**
 * The parts of Meta's webhook beyond new messages and plain receipts: edits and deletions of
 * earlier messages, the ad a message came from, what a status adds (pricing, the failure's own
 * words), marketing preferences, and the fields acknowledged without effect here.
 */

type Raw = Record<string, unknown>;
const obj = (v: unknown): Raw => (v && typeof v === "object" && !Array.isArray(v) ? (v as Raw) : {});
const str = (v: unknown, max: number): string | undefined => (typeof v === "string" ? v.slice(0, max) : undefined);

/** The sender changed (`edit`) or deleted (`revoke`) an earlier message, known by the network's id. */
export type Amendment = { kind: "edit"; externalId: string; at: number; text?: string; caption?: string } | { kind: "revoke"; externalId: string; at: number };

/** A customer's marketing preference (`user_preferences`). */
export interface Preference {
  /** Digits; empty when only `fromUserId` names the customer (until resolved). */
  from: string;
  fromUserId?: string;
  optedOut: boolean;
}

/**
 * Fields a subscribed app receives that need nothing of a session here: answered 200 and logged, so
 * Meta does not retry them and nothing is stored as what it is not. The template fields are the
 * hook point for template state (status, quality, category): handle them in `parseWebhook` before
 * this set is consulted, and take them out of it.
 */
export const ACKNOWLEDGED_FIELDS = new Set([
  "message_template_components_update",
  "phone_number_quality_update",
  "phone_number_name_update",
  "business_capability_update",
  "smb_app_state_sync",
  "history",
  "security",
  "flows",
  "group_lifecycle_update",
  "group_settings_update",
  "group_participant_update",
]);

/** An `edit` or `revoke` message object as the change it makes, or null when it names no message. */
export function amendmentOf(type: "edit" | "revoke", raw: Raw, at: number): Amendment | null {
  const body = obj(raw[type]);
  const externalId = str(body.original_message_id, 256);
  if (!externalId) return null;
  if (type === "revoke") return { kind: "revoke", externalId, at };
  const message = obj(body.message);
  const kind = str(message.type, 32) ?? "";
  if (kind === "text") {
    const text = str(obj(message.text).body, 65_536);
    return text === undefined ? null : { kind: "edit", externalId, at, text };
  }
  const caption = str(obj(message[kind]).caption, 1024);
  return caption === undefined ? null : { kind: "edit", externalId, at, caption };
}

/** The click-to-WhatsApp ad a message came from, when it says so and names it. */
export function referralOf(raw: Raw): Content["referral"] | undefined {
  const r = obj(raw.referral);
  const parsed = Referral.safeParse({
    sourceId: str(r.source_id, 256),
    sourceType: str(r.source_type, 32),
    sourceUrl: str(r.source_url, 2048),
    headline: str(r.headline, 1024),
    body: str(r.body, 4096),
    mediaType: str(r.media_type, 32),
    ctwaClid: str(r.ctwa_clid, 1024),
  });
  return parsed.success ? parsed.data : undefined;
}

/** What a status object adds to its message: the pricing, and for a failure Meta's code, title and details. */
export function statusDetailOf(raw: Raw): Pick<Content, "pricing" | "networkError"> {
  const out: Pick<Content, "pricing" | "networkError"> = {};
  const p = obj(raw.pricing);
  const pricing = Pricing.safeParse({ category: str(p.category, 64), billable: p.billable, ...(typeof p.pricing_model === "string" ? { model: p.pricing_model.slice(0, 16) } : {}), ...(typeof p.type === "string" ? { type: p.type.slice(0, 32) } : {}) });
  if (pricing.success) out.pricing = pricing.data;
  const e = obj(Array.isArray(raw.errors) ? raw.errors[0] : undefined);
  const details = str(obj(e.error_data).details, 1024) ?? str(e.message, 1024);
  const networkError = NetworkError.safeParse({ code: e.code, ...(typeof e.title === "string" ? { title: e.title.slice(0, 256) } : {}), ...(details !== undefined ? { details } : {}) });
  if (raw.status === "failed" && networkError.success) out.networkError = networkError.data;
  return out;
}

/** The marketing preferences of a `user_preferences` change (a sender by phone number; others are skipped). */
export function preferencesOf(value: Raw): Preference[] {
  const out: Preference[] = [];
  for (const item of (Array.isArray(value.user_preferences) ? value.user_preferences : []).slice(0, 1000)) {
    const p = obj(item);
    const from = str(p.wa_id, 64)?.replace(/\D/g, "") ?? "";
    const fromUserId = bsuidOf(p.user_id);
    if ((!from && !fromUserId) || p.category !== "marketing_messages" || (p.value !== "stop" && p.value !== "resume")) continue;
    out.push({ from, ...(fromUserId ? { fromUserId } : {}), optedOut: p.value === "stop" });
  }
  return out;
}

const BAN_STATES: Record<string, SessionHealth["state"]> = { DISABLE: "banned", SCHEDULE_FOR_DISABLE: "ban_scheduled", REINSTATE: "ok" };

/**
 * The account's standing from an `account_update` change, or null when the event says nothing of it
 * (partner, capability and other updates: acknowledged). A ban decides over a restriction; a
 * restriction event with no restrictions left is the account back to `ok`.
 */
export function healthOf(value: Raw, at: number): SessionHealth | null {
  const event = str(value.event, 64) ?? "";
  const base = { event, at: new Date(at).toISOString() };
  const ban = obj(value.ban_info);
  const banState = typeof ban.waba_ban_state === "string" ? BAN_STATES[ban.waba_ban_state] : undefined;
  if (banState) return { state: banState, ...base, ...(typeof ban.waba_ban_date === "string" ? { banDate: ban.waba_ban_date.slice(0, 64) } : {}) };
  if (event === "ACCOUNT_RESTRICTION") {
    const restrictions = (Array.isArray(value.restriction_info) ? value.restriction_info : []).slice(0, 20).flatMap((r) => {
      const type = str(obj(r).restriction_type, 128);
      return type ? [{ type, expiresAt: str(obj(r).expiration, 64) ?? null }] : [];
    });
    return { state: restrictions.length ? "restricted" : "ok", ...base, restrictions };
  }
  if (event === "ACCOUNT_VIOLATION") return { state: "violation", ...base, ...(typeof obj(value.violation_info).violation_type === "string" ? { violation: str(obj(value.violation_info).violation_type, 128) } : {}) };
  return null;
}

/** One entry of a webhook's `contacts`: the sender's profile and ids. */
export interface WebhookContact {
  wa_id?: string;
  user_id?: string;
  parent_user_id?: string;
  profile?: { name?: string; username?: string };
}

/** A well-formed BSUID, or undefined. */
export const bsuidOf = (v: unknown): string | undefined => (typeof v === "string" && BSUID.test(v) ? v : undefined);
const digitsOf = (v: unknown): string => (typeof v === "string" && v.length <= 64 ? v.replace(/\D/g, "") : "");
const seconds = (v: unknown): number | undefined => {
  const n = Number(v);
  return typeof v !== "boolean" && v !== null && v !== "" && Number.isFinite(n) && n > 0 ? n * 1000 : undefined;
};

/**
 * A `system` message's change of identity: `user_changed_number` (system.wa_id: the new number) or
 * `user_changed_user_id` (a new BSUID only). Null when it names neither a new number nor a new BSUID.
 */
export function noticeOf(raw: Raw, externalId: string, from: string, fromUserId: string | undefined, at: number): { notice: IdentityNotice | null; body: string; kind: string } {
  const s = obj(raw.system);
  const kind = str(s.type, 64) ?? "";
  const body = str(s.body, 1024) ?? "";
  const newPhone = digitsOf(s.wa_id ?? s.new_wa_id);
  const identity: ContactIdentity = {};
  const userId = bsuidOf(s.user_id);
  const parentUserId = bsuidOf(s.parent_user_id);
  if (userId) identity.userId = userId;
  if (parentUserId) identity.parentUserId = parentUserId;
  const previousUserId = bsuidOf(s.previous_user_id) ?? fromUserId;
  const changesNumber = kind === "user_changed_number" && newPhone.length >= 7 && newPhone.length <= 15 && newPhone !== from;
  if (!changesNumber && !userId) return { notice: null, body, kind };
  return {
    kind,
    body,
    notice: {
      externalId,
      kind,
      from,
      ...(fromUserId ? { fromUserId } : {}),
      ...(changesNumber ? { newPhone } : {}),
      ...(userId ? { identity } : {}),
      ...(previousUserId && previousUserId !== userId ? { previousUserId } : {}),
      at,
    },
  };
}

/** One item of `smb_message_echoes`: the message as the Business app sent it, or null without id, recipient or type. */
export function echoOf(raw: Raw): EchoFromNetwork | null {
  const externalId = str(raw.id, 256);
  const type = str(raw.type, 64);
  const to = digitsOf(raw.to);
  const toUserId = bsuidOf(raw.to_user_id);
  if (!externalId || raw.id !== externalId || !type || (!to && !toUserId)) return null;
  return { externalId, to, ...(toUserId ? { toUserId } : {}), timestamp: seconds(raw.timestamp) ?? Date.now(), body: inboundBody(type, raw) };
}

/** One item of `calls`, or null without id, event or party. */
export function callOf(raw: Raw): CallFromNetwork | null {
  const id = str(raw.id, 256);
  const event = raw.event;
  if (!id || raw.id !== id || (event !== "connect" && event !== "terminate")) return null;
  const direction = raw.direction === "BUSINESS_INITIATED" ? "outbound" : "inbound";
  // The other party is the caller of a user-initiated call and the callee of a business-initiated one.
  const peer = digitsOf(direction === "inbound" ? raw.from : raw.to);
  const peerUserId = bsuidOf(direction === "inbound" ? raw.from_user_id : raw.to_user_id);
  if (!peer && !peerUserId) return null;
  const duration = Number(raw.duration);
  return {
    id,
    peer,
    ...(peerUserId ? { peerUserId } : {}),
    event,
    direction,
    ...(typeof raw.status === "string" ? { status: raw.status.slice(0, 32) } : {}),
    ...(seconds(raw.start_time) ? { startedAt: seconds(raw.start_time) } : {}),
    ...(seconds(raw.end_time) ? { endedAt: seconds(raw.end_time) } : {}),
    ...(Number.isInteger(duration) && duration >= 0 && duration < 1e7 ? { durationSeconds: duration } : {}),
    at: seconds(raw.timestamp) ?? Date.now(),
  };
}

/** The sender's business-scoped user ids and username, when the webhook gives them (well-formed ones only). */
export function identityOf(c: WebhookContact | undefined): ContactIdentity | undefined {
  if (!c) return undefined;
  const out: ContactIdentity = {};
  if (typeof c.user_id === "string" && BSUID.test(c.user_id)) out.userId = c.user_id;
  if (typeof c.parent_user_id === "string" && BSUID.test(c.parent_user_id)) out.parentUserId = c.parent_user_id;
  const username = c.profile?.username;
  if (typeof username === "string" && username.length > 0 && username.length <= 64) out.username = username;
  return Object.keys(out).length ? out : undefined;
}
