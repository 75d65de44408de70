import { signedMediaUrl } from "../media/store.ts";
import { digitsOfChatId } from "../chat-id.ts";
import type { MessageRow, StoredMedia } from "../messages/mapper.ts";
import type { Content } from "../messages/content.ts";
import type { Message, TemplateSpec } from "../messages/schemas.ts";
import type { OutboundMessage } from "../networks/driver.ts";
import type { Network, SessionStatus, WhatsappCredentials } from "./schemas.ts";
import type { SendLimitsInput } from "../send-limits.ts";

/** What the Session DO keeps about its session. Credentials live here only, never in D1. */
export interface SessionConfig {
  sessionId: string;
  accountId: string;
  network: Network;
  /** Sandbox: assigned at creation. WhatsApp: learnt on connect. */
  phoneNumber: string | null;
  credentials: WhatsappCredentials | null;
  sendRatePerMinute: number | null;
  /** The session's own sending limits (absent: its network's defaults). */
  limits?: SendLimitsInput;
  /** sandbox: the business portfolio it plays (whatsapp's is in its credentials); its messaging-limit window is shared. */
  businessAccountId?: string;
}

/** The portfolio whose messaging-limit window the session shares, if any. */
export function portfolioOf(cfg: SessionConfig): string | null {
  return cfg.credentials?.businessAccountId ?? cfg.businessAccountId ?? null;
}

/** A message ready to send, built by the send service in the Worker. */
export interface Draft {
  id: string;
  to: string;
  type: OutboundMessage["type"];
  text?: string;
  template?: TemplateSpec;
  media?: StoredMedia;
  content?: Content;
  /** reaction: the network's id of the message reacted to. */
  reactionToExternalId?: string | null;
  replyTo?: string | null;
  replyToExternalId?: string | null;
  batchId?: string | null;
  campaignId?: string | null;
}

/** What the Session DO answers to a message it was asked to send or to receive. */
export type MessageOutcome =
  | { ok: true; message: Message }
  | { ok: false; code: "session_not_working"; status: SessionStatus }
  | { ok: false; code: "not_found" };

/** What the Session DO answers to a send: a free-form send into a closed 24-hour window is refused. */
export type SendOutcome = MessageOutcome | { ok: false; code: "reengagement_window_closed"; reason: string } | { ok: false; code: "busy" } | { ok: false; code: "pair_rate_limited"; retryAfterMs: number };

/** What the Session DO answers to a bulk send's messages it was asked to queue. */
export type QueueOutcome = { ok: true } | Exclude<MessageOutcome, { ok: true }> | { ok: false; code: "busy" };

export type RpcResult<T> = { ok: true; value: T } | { ok: false; code: string; message: string };

/** A queued message (its stored row) as a draft to send again. */
export function draftOfRow(row: MessageRow): Draft {
  return {
    id: row.id,
    to: digitsOfChatId(row.chatId),
    type: row.type,
    ...(row.text !== null ? { text: row.text } : {}),
    ...(row.template !== null ? { template: JSON.parse(row.template) as TemplateSpec } : {}),
    ...(row.media !== null ? { media: JSON.parse(row.media) as StoredMedia } : {}),
    ...(row.content !== null ? { content: JSON.parse(row.content) as Content } : {}),
  };
}

export function toOutbound(draft: Draft, mediaLink: string): OutboundMessage {
  return {
    to: draft.to,
    type: draft.type,
    text: draft.text,
    template: draft.template,
    media: draft.media ? { link: mediaLink, caption: draft.media.caption, filename: draft.media.filename } : undefined,
    content: draft.content,
    reactionToExternalId: draft.reactionToExternalId ?? null,
    replyToExternalId: draft.replyToExternalId ?? null,
  };
}

/** The outbound message with its media link: uploaded media get a signed URL the network can fetch. */
export async function outboundWithMedia(env: Env, draft: Draft): Promise<OutboundMessage> {
  const m = draft.media;
  let link = m?.url ?? "";
  if (m?.mediaId) link = await signedMediaUrl(env, m.origin ?? "", m.mediaId);
  return toOutbound(draft, link);
}

/** Runs tasks of the same key one after another (a chat's messages keep their order). */
export class KeyedSerial {
  private readonly chains = new Map<string, Promise<unknown>>();

  run<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const previous = this.chains.get(key) ?? Promise.resolve();
    const run = previous.then(fn, fn);
    const tail = run.then(
      () => undefined,
      () => undefined,
    );
    this.chains.set(key, tail);
    void tail.then(() => {
      if (this.chains.get(key) === tail) this.chains.delete(key);
    });
    return run;
  }
}
