import { hmacSha256, timingSafeEqual, toHex } from "../../platform/crypto.ts";
import { log } from "../../platform/log.ts";
import type { SessionHealth, WhatsappCredentials } from "../sessions/schemas.ts";
import { chatIdOf } from "../chat-id.ts";
import type { CallFromNetwork, EchoFromNetwork, FailureReason, HookRequest, IdentityNotice, InboundFromNetwork, NetworkHost } from "./driver.ts";
import { mapGraphError } from "./whatsapp-errors.ts";
import { ACKNOWLEDGED_FIELDS, amendmentOf, bsuidOf, callOf, echoOf, healthOf, identityOf, noticeOf, type WebhookContact, preferencesOf, referralOf, statusDetailOf, type Amendment, type Preference } from "./whatsapp-hook-fields.ts";
import { inboundBody } from "./whatsapp-inbound.ts";
import { TEMPLATE_FIELDS, templateUpdateOf } from "./whatsapp-hook-templates.ts";
import type { TemplateUpdate } from "./driver.ts";

/** Meta's webhook for one session: the verification handshake (GET) and signed events (POST). */
export async function handleWhatsappWebhook(host: NetworkHost, creds: WhatsappCredentials, req: HookRequest): Promise<{ status: number; body: string }> {
  if (req.method === "GET") {
    const ok = req.query["hub.mode"] === "subscribe" && req.query["hub.verify_token"] === creds.verifyToken && req.query["hub.challenge"];
    return ok ? { status: 200, body: req.query["hub.challenge"]! } : { status: 403, body: "" };
  }
  if (!(await verifyHubSignature(creds.appSecret, req.rawBody, req.signature))) return { status: 401, body: "" };
  let payload: unknown;
  try {
    payload = JSON.parse(req.rawBody);
  } catch {
    return { status: 400, body: "" };
  }
  const { sessionId } = host.identity();
  const parsed = parseWebhook(payload, creds.phoneNumberId, host.identity().phoneNumber, creds.businessAccountId ?? null);
  if (parsed.otherNumber > 0) {
    // Signed by this app but for another of its numbers: most likely the app's callback URL points here for all of them.
    log.warn("whatsapp changes for another phone number skipped", { sessionId, changes: parsed.otherNumber });
  }
  if (parsed.skipped > 0) log.warn("whatsapp webhook items without id, sender or type skipped", { sessionId, skipped: parsed.skipped });
  const unsupported = parsed.messages.filter((m) => m.type === "unsupported").length;
  if (unsupported > 0) log.info("whatsapp messages of unsupported types stored", { sessionId, unsupported });
  if (Object.keys(parsed.acknowledged).length > 0) log.info("whatsapp webhook fields acknowledged without effect", { sessionId, fields: parsed.acknowledged });
  const unknownUsers = await resolveUsers(host, parsed);
  if (unknownUsers > 0) log.info("whatsapp items naming only a BSUID no contact has: recorded under the BSUID", { sessionId, items: unknownUsers });
  const stored = new Set<string>();
  for (const m of parsed.messages) if (m.from && (await host.received(m))) stored.add(m.externalId);
  // After the system message that announces it is stored in the chat it moves; a replayed one changes nothing.
  for (const n of parsed.notices) if (stored.has(n.externalId)) await host.identityChanged(n);
  for (const e of parsed.echoes) if (e.to) await host.echoed(e);
  for (const c of parsed.calls) if (c.peer) await host.called(c);
  // After the messages of the same payload, so an edit or deletion finds the message it names.
  for (const a of parsed.amendments) {
    const row = a.kind === "edit" ? await host.edited(a.externalId, a, a.at) : await host.revoked(a.externalId, a.at);
    if (!row) log.info("whatsapp edit or deletion of an unknown (or already deleted) message ignored", { sessionId, kind: a.kind });
  }
  for (const p of parsed.preferences) if (p.from) await host.marketingPreference(p.from, p.optedOut);
  if (parsed.health) await host.accountHealth(parsed.health);
  for (const t of parsed.templates) {
    if (!(await host.templateUpdated(t))) log.info("whatsapp template update for a template not cached ignored (the next sync brings it)", { sessionId });
  }
  // Oldest first: with conditional updates the order does not matter for the end state, but
  // events then come out in the order the network produced them where it can.
  const statuses = parsed.statuses.sort((a, b) => a.timestamp - b.timestamp);
  for (const s of statuses) {
    await host.statusChanged({ externalIds: [s.externalId] }, s.status, s.timestamp, s.error);
    if (s.detail.pricing || s.detail.networkError) await host.statusDetail(s.externalId, s.detail);
  }
  return { status: 200, body: "" };
}

/**
 * Items that name the person only by BSUID (the number withheld) get the address of the contact that
 * BSUID belongs to: its number, or the BSUID itself for a person known only by it; a BSUID no contact
 * has is such a person too (their chat is `<BSUID>@bsuid` and their first message makes the contact).
 * An item that names both a number and the BSUID of a contact with no number yet gives that contact
 * the number first (`numberKnown`), so the same person keeps one contact and one chat. Answers how
 * many items named a BSUID no contact had.
 */
async function resolveUsers(host: NetworkHost, parsed: ParsedWebhook): Promise<number> {
  const items: { userId?: string; number: () => string; set: (address: string) => void }[] = [
    ...parsed.messages.map((m) => ({ userId: m.fromUserId, number: () => m.from, set: (d: string) => (m.from = d) })),
    ...parsed.notices.map((n) => ({ userId: n.fromUserId, number: () => n.from, set: (d: string) => (n.from = d) })),
    ...parsed.preferences.map((p) => ({ userId: p.fromUserId, number: () => p.from, set: (d: string) => (p.from = d) })),
    ...parsed.echoes.map((e) => ({ userId: e.toUserId, number: () => e.to, set: (d: string) => (e.to = d) })),
    ...parsed.calls.map((c) => ({ userId: c.peerUserId, number: () => c.peer, set: (d: string) => (c.peer = d) })),
  ].filter((i) => i.userId);
  if (items.length === 0) return 0;
  const addresses = await host.phonesOfUsers([...new Set(items.map((i) => i.userId!))]);
  const known = new Map<string, string>();
  for (const i of items) {
    const number = i.number();
    if (number && addresses.get(i.userId!) === i.userId) known.set(i.userId!, number);
  }
  for (const [userId, digits] of known) {
    await host.numberKnown(userId, digits);
    addresses.set(userId, digits);
  }
  let unknown = 0;
  for (const i of items) {
    if (i.number()) continue;
    const address = addresses.get(i.userId!);
    if (!address) unknown++;
    i.set(address ?? i.userId!);
  }
  return unknown;
}

/** `X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the raw body with the app secret>`. */
export async function verifyHubSignature(appSecret: string, rawBody: string, header: string | null | undefined): Promise<boolean> {
  if (!header || !header.startsWith("sha256=")) return false;
  const expected = `sha256=${toHex(await hmacSha256(appSecret, rawBody))}`;
  return timingSafeEqual(expected, header.trim().toLowerCase());
}

export interface StatusFromNetwork {
  externalId: string;
  status: "sent" | "delivered" | "read" | "failed";
  timestamp: number;
  error?: FailureReason;
  detail: ReturnType<typeof statusDetailOf>;
}

export interface ParsedWebhook {
  messages: InboundFromNetwork[];
  statuses: StatusFromNetwork[];
  amendments: Amendment[];
  preferences: Preference[];
  /** Changes of a person's number or BSUID (`system` messages; the message itself is in `messages` too). */
  notices: IdentityNotice[];
  /** Messages sent from the WhatsApp Business app on this number (`smb_message_echoes`). */
  echoes: EchoFromNetwork[];
  calls: CallFromNetwork[];
  /** Template status, quality and category changes of the business account. */
  templates: TemplateUpdate[];
  /** The account's standing from the last `account_update` that reports one (for this number, or the whole account). */
  health: SessionHealth | null;
  /** Changes of fields that need nothing of the session (ACKNOWLEDGED_FIELDS), by field; any other unknown field counts under `other`. */
  acknowledged: Record<string, number>;
  /** Items of this number without the fields every item has (a message's id, sender and type; a status's id and status). */
  skipped: number;
  /** Changes for another phone number (one Meta app may serve several): not this session's. */
  otherNumber: number;
}

/** Fields whose changes carry `metadata.phone_number_id` and items for one number. */
const NUMBER_FIELDS = new Set(["messages", "user_preferences", "smb_message_echoes", "calls"]);
/** At most this many items of one list are read (Meta batches up to 1000 per change). */
const MAX_ITEMS = 1000;
const list = (v: unknown): Record<string, unknown>[] => (Array.isArray(v) ? v.slice(0, MAX_ITEMS) : []) as Record<string, unknown>[];

/**
 * What a Meta webhook payload (`WebhookPayload`) says for the phone number `phoneNumberId`: a change
 * whose `metadata.phone_number_id` is another number's (or missing) is left out, since Meta sends an
 * app's webhook for all of its numbers to the same URL.
 */
export function parseWebhook(payload: unknown, phoneNumberId: string, phoneNumber: string | null = null, businessAccountId: string | null = null): ParsedWebhook {
  const out: ParsedWebhook = { messages: [], statuses: [], amendments: [], preferences: [], notices: [], echoes: [], calls: [], templates: [], health: null, acknowledged: {}, skipped: 0, otherNumber: 0 };
  const p = payload as { entry?: { changes?: { field?: string; value?: Record<string, unknown> }[] }[] };
  for (const entry of Array.isArray(p?.entry) ? p.entry.slice(0, MAX_ITEMS) : []) {
    for (const change of Array.isArray(entry?.changes) ? entry.changes.slice(0, MAX_ITEMS) : []) {
      const value = change?.value;
      if (!value || typeof value !== "object") continue;
      const field = typeof change.field === "string" ? change.field : "messages";
      if (field === "account_update") {
        // It names the number it concerns, if any; without one it is the whole business account's.
        const number = typeof value.phone_number === "string" ? value.phone_number.replace(/\D/g, "") : null;
        if (number && phoneNumber && number !== phoneNumber) out.otherNumber++;
        else {
          const health = healthOf(value, Number((entry as { time?: unknown }).time) * 1000 || Date.now());
          if (health) out.health = health;
          else out.acknowledged.account_update = (out.acknowledged.account_update ?? 0) + 1;
        }
        continue;
      }
      if (TEMPLATE_FIELDS.has(field)) {
        // The business account's (entry id): another account's, when the session names its own, is not this session's.
        const waba = (entry as { id?: unknown }).id;
        if (businessAccountId && String(waba) !== businessAccountId) out.otherNumber++;
        else {
          const update = templateUpdateOf(field, value);
          if (update) out.templates.push(update);
          else out.skipped++;
        }
        continue;
      }
      if (!NUMBER_FIELDS.has(field)) {
        const name = ACKNOWLEDGED_FIELDS.has(field) ? field : "other";
        out.acknowledged[name] = (out.acknowledged[name] ?? 0) + 1;
        continue;
      }
      if ((value.metadata as { phone_number_id?: unknown } | undefined)?.phone_number_id !== phoneNumberId) {
        out.otherNumber++;
        continue;
      }
      if (field === "user_preferences") out.preferences.push(...preferencesOf(value));
      else if (field === "smb_message_echoes") {
        for (const raw of list(value.message_echoes)) {
          const echo = echoOf(raw ?? {});
          if (echo) out.echoes.push(echo);
          else out.skipped++;
        }
      } else if (field === "calls") {
        for (const raw of list(value.calls)) {
          const call = callOf(raw ?? {});
          if (call) out.calls.push(call);
          else out.skipped++;
        }
      } else parseMessages(value, out);
    }
  }
  return out;
}

/** The messages and statuses of one `messages` change. */
function parseMessages(value: Record<string, unknown>, out: ParsedWebhook): void {
  const contacts = list(value.contacts) as WebhookContact[];
  for (const raw of list(value.messages)) {
    const id = raw?.id;
    const type = raw?.type;
    const from = typeof raw?.from === "string" && raw.from.length <= 64 ? raw.from.replace(/\D/g, "") : "";
    const fromUserId = bsuidOf(raw?.from_user_id);
    if (typeof id !== "string" || typeof type !== "string" || id.length > 256 || (!from && !fromUserId)) {
      out.skipped++;
      continue;
    }
    const contact = contacts.find((c) => (from && c?.wa_id === raw.from) || (fromUserId && c?.user_id === fromUserId));
    const identity = identityOf(contact) ?? (fromUserId ? { userId: fromUserId } : undefined);
    const base = {
      externalId: id,
      from,
      ...(fromUserId ? { fromUserId } : {}),
      timestamp: Number(raw.timestamp) * 1000 || Date.now(),
      profileName: contact?.profile?.name ?? contacts[0]?.profile?.name,
      ...(identity ? { identity } : {}),
      contextExternalId: (raw.context as { id?: string } | undefined)?.id,
    };
    if (type === "edit" || type === "revoke") {
      const amendment = amendmentOf(type, raw, base.timestamp);
      if (amendment) out.amendments.push(amendment);
      else out.skipped++;
      continue;
    }
    if (type === "system") {
      // A notice about the person, stored as such in their chat (it opens no customer-service window).
      const { notice, body, kind } = noticeOf(raw, id, from, fromUserId, base.timestamp);
      if (notice) out.notices.push(notice);
      const system = { kind: kind || "unknown", body, ...(notice?.newPhone ? { newChatId: chatIdOf(notice.newPhone) } : {}), ...(notice?.identity?.userId ? { userId: notice.identity.userId } : {}) };
      // The notice is the network's, not the person's: it carries no profile or identity of its own.
      out.messages.push({ externalId: id, from, ...(fromUserId ? { fromUserId } : {}), timestamp: base.timestamp, type: "system", content: { system } });
      continue;
    }
    const body = inboundBody(type, raw);
    const referral = referralOf(raw);
    out.messages.push({ ...base, ...body, ...(referral ? { content: { ...body.content, referral } } : {}) });
  }
  for (const raw of list(value.statuses)) {
    const status = raw?.status;
    if (typeof raw?.id !== "string" || raw.id.length > 256 || (status !== "sent" && status !== "delivered" && status !== "read" && status !== "failed")) {
      out.skipped++;
      continue;
    }
    const e = (Array.isArray(raw.errors) ? raw.errors[0] : undefined) as { code?: number; title?: string; message?: string } | undefined;
    out.statuses.push({
      externalId: raw.id,
      status,
      timestamp: Number(raw.timestamp) * 1000 || Date.now(),
      ...(status === "failed" ? { error: mapGraphError(400, e?.code, e?.title ?? e?.message).error } : {}),
      detail: statusDetailOf(raw),
    });
  }
}
