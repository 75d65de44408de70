import { hmacSha256, timingSafeEqual, toHex } from "../../platform/crypto.ts";
import { log } from "../../platform/log.ts";
import type { SessionHealth, WhatsappCredentials } from "../sessions/schemas.ts";
import type { FailureReason, HookRequest, InboundFromNetwork, NetworkHost } from "./driver.ts";
import { mapGraphError } from "./whatsapp-errors.ts";
import { ACKNOWLEDGED_FIELDS, amendmentOf, healthOf, identityOf, type WebhookContact, preferencesOf, referralOf, statusDetailOf, type Amendment, type Preference } from "./whatsapp-hook-fields.ts";
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
  for (const m of parsed.messages) await host.received(m);
  // After the messages of the same payload, so an edit or deletion finds the message it names.
  for (const a of parsed.amendments) {
    const row = a.kind === "edit" ? await host.edited(a.externalId, a, a.at) : await host.revoked(a.externalId, a.at);
    if (!row) log.info("whatsapp edit or deletion of an unknown (or already deleted) message ignored", { sessionId, kind: a.kind });
  }
  for (const p of parsed.preferences) await host.marketingPreference(p.from, p.optedOut);
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

/**
 * Messages and statuses of a Meta webhook payload (`WebhookPayload`) for the phone number
 * `phoneNumberId`: a change whose `metadata.phone_number_id` is another number's (or missing) is
 * left out, since Meta sends an app's webhook for all of its numbers to the same URL.
 */
export function parseWebhook(payload: unknown, phoneNumberId: string, phoneNumber: string | null = null, businessAccountId: string | null = null): ParsedWebhook {
  const out: ParsedWebhook = { messages: [], statuses: [], amendments: [], preferences: [], templates: [], health: null, acknowledged: {}, skipped: 0, otherNumber: 0 };
  const p = payload as { entry?: { changes?: { field?: string; value?: Record<string, unknown> }[] }[] };
  for (const entry of Array.isArray(p?.entry) ? p.entry : []) {
    for (const change of Array.isArray(entry?.changes) ? entry.changes : []) {
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
      if (field !== "messages" && field !== "user_preferences") {
        const name = ACKNOWLEDGED_FIELDS.has(field) ? field : "other";
        out.acknowledged[name] = (out.acknowledged[name] ?? 0) + 1;
        continue;
      }
      if ((value.metadata as { phone_number_id?: unknown } | undefined)?.phone_number_id !== phoneNumberId) {
        out.otherNumber++;
        continue;
      }
      if (field === "user_preferences") {
        out.preferences.push(...preferencesOf(value));
        continue;
      }
      const contacts = (Array.isArray(value.contacts) ? value.contacts : []) as WebhookContact[];
      for (const raw of (Array.isArray(value.messages) ? value.messages : []) as Record<string, unknown>[]) {
        const id = raw?.id;
        const from = raw?.from;
        const type = raw?.type;
        if (typeof id !== "string" || typeof from !== "string" || typeof type !== "string" || id.length > 256 || from.length > 64) {
          out.skipped++;
          continue;
        }
        const base = {
          externalId: id,
          from: from.replace(/\D/g, ""),
          timestamp: Number(raw.timestamp) * 1000 || Date.now(),
          profileName: contacts.find((c) => c.wa_id === from)?.profile?.name ?? contacts[0]?.profile?.name,
          identity: identityOf(contacts.find((c) => c.wa_id === from)),
          contextExternalId: (raw.context as { id?: string } | undefined)?.id,
        };
        if (!base.from) {
          out.skipped++;
          continue;
        }
        if (type === "edit" || type === "revoke") {
          const amendment = amendmentOf(type, raw, base.timestamp);
          if (amendment) out.amendments.push(amendment);
          else out.skipped++;
          continue;
        }
        const body = inboundBody(type, raw);
        const referral = referralOf(raw);
        out.messages.push({ ...base, ...body, ...(referral ? { content: { ...body.content, referral } } : {}) });
      }
      for (const raw of (Array.isArray(value.statuses) ? value.statuses : []) as Record<string, unknown>[]) {
        const status = raw?.status;
        if (typeof raw?.id !== "string" || (status !== "sent" && status !== "delivered" && status !== "read" && status !== "failed")) {
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
  }
  return out;
}
