import { SERVICE_WINDOW_MS } from "../chats/schemas.ts";
import type { Interactive, InteractiveSend } from "../messages/content.ts";
import type { WhatsappCredentials } from "../sessions/schemas.ts";
import type { ConnectResult, FailureReason, HookRequest, NetworkDriver, NetworkFile, NetworkHost, NetworkSendResult, OutboundMessage, TemplateResult } from "./driver.ts";
import { templateCalls } from "./whatsapp-templates.ts";
import { mapGraphError } from "./whatsapp-errors.ts";
import { handleWhatsappWebhook } from "./whatsapp-hook.ts";
import { isUserAddress } from "../chat-id.ts";

/**
 * A send the Cloud API may have accepted without our hearing of it: it timed out, or the connection
 * was lost once open (workerd reports a refused connection the same way, so that counts too). Sent
 * again, the recipient could get it twice, so it is never retried: the message fails with this
 * code and the client decides (README "Messages").
 */
export const SEND_OUTCOME_UNKNOWN: FailureReason = {
  code: "send_outcome_unknown",
  message: "The WhatsApp Cloud API did not answer the send in time (or the connection was lost): the message may or may not have been sent, so it was not sent again.",
};

/** How a call without an answer ended: `unknown` when the request may have reached Meta (see SEND_OUTCOME_UNKNOWN). */
type NoAnswer = "unknown" | "unreachable";

function noAnswer(err: unknown): NoAnswer {
  const e = err as { name?: string; message?: string } | null;
  if (e?.name === "TimeoutError" || e?.name === "AbortError") return "unknown";
  return typeof e?.message === "string" && e.message.includes("Network connection lost") ? "unknown" : "unreachable";
}

interface GraphError {
  error?: { message?: string; code?: number; error_subcode?: number };
}

/** The WhatsApp Business Cloud API over fetch. Credentials never leave this object except in the Authorization header. */
export class WhatsappDriver implements NetworkDriver {
  constructor(
    private readonly baseUrl: string,
    private readonly creds: WhatsappCredentials | null,
    private readonly host: NetworkHost | null = null,
    private readonly timeoutMs = 15_000,
  ) {}

  async webhook(req: HookRequest): Promise<{ status: number; body: string }> {
    if (!this.creds || !this.host) return { status: 404, body: "" };
    return handleWhatsappWebhook(this.host, this.creds, req);
  }

  /** Templates are the business account's (`credentials.businessAccountId`): see whatsapp-templates.ts. */
  readonly listTemplates = (after: string | null) => this.templates().list(after);
  readonly createTemplate: NonNullable<NetworkDriver["createTemplate"]> = (t) => this.templates().create(t);
  readonly deleteTemplate = (name: string, externalId: string | null): Promise<TemplateResult<null>> => this.templates().remove(name, externalId);

  private templates() {
    return templateCalls(this.creds?.businessAccountId ?? null, (method, path, body) => this.call(method, path, body));
  }

  private async call(method: string, path: string, body?: unknown): Promise<{ status: number; json: unknown } | { status: 0; json: null; noAnswer: NoAnswer }> {
    try {
      const res = await fetch(`${this.baseUrl.replace(/\/$/, "")}/${path}`, {
        method,
        headers: { Authorization: `Bearer ${this.creds!.accessToken}`, ...(body ? { "Content-Type": "application/json" } : {}) },
        body: body ? JSON.stringify(body) : undefined,
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      const json = (await res.json().catch(() => null)) as unknown;
      return { status: res.status, json };
    } catch (err) {
      return { status: 0, json: null, noAnswer: noAnswer(err) };
    }
  }

  /** Checks the credentials against the phone number resource. */
  async connect(): Promise<ConnectResult> {
    if (!this.creds) return { ok: false, reason: "credentials_missing", message: "The session has no WhatsApp credentials." };
    const res = await this.call("GET", `${this.creds.phoneNumberId}?fields=display_phone_number,verified_name,quality_rating`);
    if (res.status === 0) return { ok: false, reason: "network_unavailable", message: "The WhatsApp Cloud API could not be reached.", transient: true };
    if (res.status === 200) {
      const digits = String((res.json as { display_phone_number?: string }).display_phone_number ?? "").replace(/\D/g, "");
      return { ok: true, phoneNumber: digits };
    }
    const err = (res.json as GraphError | null)?.error;
    const mapped = mapGraphError(res.status, err?.code, err?.message);
    if (mapped.sessionFailure) return { ok: false, reason: mapped.sessionFailure, message: mapped.error.message };
    if (res.status === 404 || err?.code === 100 || err?.code === 803) {
      return { ok: false, reason: "phone_number_not_found", message: "The phone number id was not found for this access token." };
    }
    return { ok: false, reason: mapped.error.code, message: mapped.error.message, transient: mapped.retryAfterMs !== undefined };
  }

  async send(message: OutboundMessage): Promise<NetworkSendResult> {
    if (!this.creds) return { ok: false, error: { code: "credentials_missing", message: "The session has no WhatsApp credentials." }, sessionFailure: "credentials_missing" };
    const res = await this.call("POST", `${this.creds.phoneNumberId}/messages`, graphMessageBody(message));
    // No retryAfterMs: an unknown outcome is final (a retry could deliver it twice).
    if ("noAnswer" in res && res.noAnswer === "unknown") return { ok: false, error: SEND_OUTCOME_UNKNOWN };
    if (res.status === 0) return { ok: false, error: { code: "network_unavailable", message: "The WhatsApp Cloud API could not be reached." }, retryAfterMs: 30_000 };
    if (res.status === 200) {
      const id = (res.json as { messages?: { id?: string }[] }).messages?.[0]?.id;
      return { ok: true, externalId: id ?? null };
    }
    const err = (res.json as GraphError | null)?.error;
    return { ok: false, ...mapGraphError(res.status, err?.code, err?.message) };
  }

  async closedWindows(recipients: string[]): Promise<Set<string>> {
    if (!this.host || recipients.length === 0) return new Set();
    const wanted = [...new Set(recipients)];
    const open = await this.host.lastInboundAt(wanted, Date.now() - SERVICE_WINDOW_MS);
    return new Set(wanted.filter((to) => !open.has(to)));
  }

  /** Media id -> a short-lived URL (GET /{media-id}) -> the bytes, both with the session's token. */
  async fetchMedia(networkMediaId: string): Promise<NetworkFile> {
    if (!this.creds) return { ok: false, reason: "The session has no WhatsApp credentials.", transient: false };
    if (!/^[0-9A-Za-z_.-]{1,128}$/.test(networkMediaId)) return { ok: false, reason: "The media id is not valid.", transient: false };
    const meta = await this.call("GET", encodeURIComponent(networkMediaId));
    if (meta.status === 0) return { ok: false, reason: "The WhatsApp Cloud API could not be reached.", transient: true };
    if (meta.status !== 200) {
      const err = (meta.json as GraphError | null)?.error;
      const mapped = mapGraphError(meta.status, err?.code, err?.message);
      return { ok: false, reason: mapped.error.message, transient: mapped.retryAfterMs !== undefined };
    }
    const info = meta.json as { url?: unknown; mime_type?: unknown; file_size?: unknown };
    if (typeof info.url !== "string" || !/^https?:\/\//.test(info.url)) return { ok: false, reason: "The Cloud API gave no download URL for the media.", transient: true };
    let res: Response;
    try {
      // The URL is Meta's and needs the token; redirects are not followed (the token must not travel elsewhere).
      res = await fetch(info.url, { headers: { Authorization: `Bearer ${this.creds.accessToken}` }, redirect: "manual", signal: AbortSignal.timeout(this.timeoutMs * 2) });
    } catch {
      return { ok: false, reason: "The media download could not be reached.", transient: true };
    }
    if (!res.ok || !res.body) {
      await res.body?.cancel();
      return { ok: false, reason: `The media download answered HTTP ${res.status}.`, transient: res.status >= 500 || res.status === 429 || res.status === 404 };
    }
    // The reference document has file_size as a string; a number is accepted too.
    const declared = typeof info.file_size === "number" || (typeof info.file_size === "string" && /^[0-9]{1,15}$/.test(info.file_size)) ? Number(info.file_size) : NaN;
    const size = Number.isFinite(declared) ? declared : Number(res.headers.get("Content-Length") ?? NaN);
    return { ok: true, body: res.body, mimetype: typeof info.mime_type === "string" ? info.mime_type : res.headers.get("Content-Type"), size: Number.isFinite(size) ? size : null };
  }

  async markRead(externalId: string): Promise<NetworkSendResult> {
    if (!this.creds) return { ok: false, error: { code: "credentials_missing", message: "The session has no WhatsApp credentials." }, sessionFailure: "credentials_missing" };
    const res = await this.call("POST", `${this.creds.phoneNumberId}/messages`, graphReadBody(externalId));
    if (res.status === 0) return { ok: false, error: { code: "network_unavailable", message: "The WhatsApp Cloud API could not be reached." }, retryAfterMs: 30_000 };
    if (res.status === 200) return { ok: true, externalId };
    const err = (res.json as GraphError | null)?.error;
    return { ok: false, ...mapGraphError(res.status, err?.code, err?.message) };
  }
}

/** The Cloud API's read receipt for an inbound message (schema `MarkMessageRequestPayload`). */
export function graphReadBody(externalId: string): Record<string, unknown> {
  return { messaging_product: "whatsapp", status: "read", message_id: externalId };
}

/** The Cloud API request body (schema `Message` of the reference OpenAPI document). */
export function graphMessageBody(m: OutboundMessage): Record<string, unknown> {
  // A person known only by BSUID is sent to by it, in `recipient` (the Cloud API takes it instead of `to`).
  const body: Record<string, unknown> = { messaging_product: "whatsapp", recipient_type: "individual", ...(isUserAddress(m.to) ? { recipient: m.to } : { to: m.to }), type: m.type };
  if (m.replyToExternalId && m.type !== "reaction") body.context = { message_id: m.replyToExternalId };
  const c = m.content ?? {};
  if (m.type === "text") body.text = { body: m.text, preview_url: false };
  else if (m.type === "template" && m.template) {
    body.template = {
      name: m.template.name,
      language: { policy: "deterministic", code: m.template.language },
      ...(m.template.components ? { components: m.template.components } : {}),
    };
  } else if (m.type === "location" && c.location) {
    // The send schema has the coordinates as strings and no url.
    const { latitude, longitude, name, address } = c.location;
    body.location = compact({ latitude: String(latitude), longitude: String(longitude), name, address });
  } else if (m.type === "contacts" && c.contacts) {
    body.contacts = c.contacts.map((card) =>
      compact({
        name: compact({ formatted_name: card.name.formattedName, first_name: card.name.firstName, last_name: card.name.lastName, middle_name: card.name.middleName, prefix: card.name.prefix, suffix: card.name.suffix }),
        phones: card.phones?.map((p) => compact({ phone: p.phone, wa_id: p.waId, type: p.type })),
        emails: card.emails?.map((e) => compact({ email: e.email, type: e.type })),
        urls: card.urls?.map((u) => compact({ url: u.url, type: u.type })),
        org: card.org ? compact({ ...card.org }) : undefined,
        birthday: card.birthday,
      }),
    );
  } else if (m.type === "interactive" && c.interactive && isInteractiveSend(c.interactive)) {
    const i = c.interactive;
    body.interactive = compact({
      type: i.type,
      header: i.header ? { type: "text", text: i.header } : undefined,
      body: { text: i.body },
      footer: i.footer ? { text: i.footer } : undefined,
      action:
        i.type === "button"
          ? { buttons: i.buttons.map((b) => ({ type: "reply", reply: { id: b.id, title: b.title } })) }
          : { button: i.button, sections: i.sections.map((s) => compact({ title: s.title, rows: s.rows.map((r) => compact({ id: r.id, title: r.title, description: r.description })) })) },
    });
  } else if (m.type === "reaction" && c.reaction) {
    body.reaction = { message_id: m.reactionToExternalId ?? "", emoji: c.reaction.emoji };
  } else if (m.type === "sticker" && m.media) {
    body.sticker = { link: m.media.link };
  } else if (m.media) {
    const media: Record<string, unknown> = { link: m.media.link };
    if (m.media.caption && m.type !== "audio") media.caption = m.media.caption;
    if (m.media.filename && m.type === "document") media.filename = m.media.filename;
    body[m.type] = media;
  }
  return body;
}

function isInteractiveSend(i: Interactive): i is InteractiveSend {
  return i.type === "button" || i.type === "list";
}

function compact<T extends Record<string, unknown>>(o: T): T {
  for (const k of Object.keys(o)) if (o[k] === undefined) delete o[k];
  return o;
}
