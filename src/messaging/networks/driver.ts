import type { MessageType } from "../message-types.ts";
import type { Content } from "../messages/content.ts";
import type { MessageRow } from "../messages/mapper.ts";
import type { Config } from "../../platform/config.ts";
import type { TemplateSpec } from "../messages/schemas.ts";
import type { SessionHealth } from "../sessions/schemas.ts";
import type { ContactIdentity } from "../contacts/schemas.ts";

/** A message as a network driver sends it. */
export interface OutboundMessage {
  /** Recipient digits (E.164 without "+"). */
  to: string;
  type: MessageType;
  text?: string;
  template?: TemplateSpec;
  media?: { link: string; caption?: string | null; filename?: string | null };
  /** The typed body of the other types (a reaction's target as the network's id: `reactionToExternalId`). */
  content?: Content;
  reactionToExternalId?: string | null;
  /** The network's id of the message replied to. */
  replyToExternalId?: string | null;
}

/** The failure of a free-form send into a closed customer-service window (see `closedWindows`). */
export const WINDOW_CLOSED: FailureReason = {
  code: "reengagement_window_closed",
  message: "More than 24 hours have passed since the recipient last wrote (or they never did): only a template message can be sent.",
};

export interface FailureReason {
  code: string;
  message: string;
}

export type NetworkSendResult =
  | { ok: true; externalId: string | null }
  | {
      ok: false;
      error: FailureReason;
      /** Transient (rate limit, network down): a queued send is retried after this long. */
      retryAfterMs?: number;
      /** Meta's pair rate for this recipient was hit: the session's bucket for it is emptied. */
      limit?: "pair";
      /** Attempts in all for this failure (default: the sender's). */
      maxAttempts?: number;
      /** The failure says the session itself is broken (e.g. the token was revoked). */
      sessionFailure?: string;
    };

export type ConnectResult = { ok: true; phoneNumber: string } | { ok: false; reason: string; message: string; transient?: boolean };

/** A message as a network delivers it to a session. */
export interface InboundFromNetwork {
  externalId: string;
  from: string;
  timestamp: number;
  type: MessageType;
  text?: string;
  template?: TemplateSpec;
  media?: InboundMedia;
  /** The typed body of the other types (messages/content.ts). */
  content?: Content;
  /** reaction: the network's id of the message reacted to. */
  reactionToExternalId?: string;
  profileName?: string;
  /** What the network says of the sender beside the number (WhatsApp: BSUIDs, username). */
  identity?: ContactIdentity;
  /** The sender's BSUID when the network gives one (with the number withheld, `from` is empty until the host resolves it: to the number, or the BSUID itself). */
  fromUserId?: string;
  contextExternalId?: string;
}

/**
 * The network says a person's identity changed: a new number (`newPhone`: the contact and its chat
 * move there) or a new BSUID. `from`: the number before (digits; empty when only BSUIDs name them).
 */
export interface IdentityNotice {
  /** The network's id of the message that announced it (a replayed one changes nothing). */
  externalId: string;
  kind: string;
  from: string;
  fromUserId?: string;
  newPhone?: string;
  /** The ids after the change. */
  identity?: ContactIdentity;
  previousUserId?: string;
  at: number;
}

/** A message the business sent from another client on the same number (WhatsApp Business app echoes). */
export interface EchoFromNetwork {
  externalId: string;
  /** Recipient digits (empty when only `toUserId` names them, until the host resolves it). */
  to: string;
  toUserId?: string;
  timestamp: number;
  body: InboundBody;
}

/** A voice call on the session's number, as the network reports each step. */
export interface CallFromNetwork {
  id: string;
  /** The other party's digits (empty when only `peerUserId` names them, until the host resolves it). */
  peer: string;
  peerUserId?: string;
  event: "connect" | "terminate";
  direction: "inbound" | "outbound";
  status?: string;
  startedAt?: number;
  endedAt?: number;
  durationSeconds?: number;
  at: number;
}

/** A file as a network announces it: bytes are fetched separately (by `networkMediaId`) or carried inline. */
export interface InboundMedia {
  mimetype: string | null;
  filename: string | null;
  caption: string | null;
  networkMediaId?: string | null;
  sha256?: string | null;
  voice?: boolean;
  animated?: boolean;
  /** Bytes already in our store (sandbox uploads). */
  mediaId?: string | null;
  size?: number | null;
  /** Bytes to fetch from a public URL (sandbox). */
  sourceUrl?: string | null;
}

/** An inbound message without its envelope (id, sender, time). */
export type InboundBody = Omit<InboundFromNetwork, "externalId" | "from" | "timestamp" | "profileName">;

/** A call of a network's webhook, as the Worker hands it to the session. */
export interface HookRequest {
  method: string;
  query: Record<string, string>;
  rawBody: string;
  signature: string | null;
}

/** What a network answers for a file it holds: the bytes as a response, or why not. */
export type NetworkFile = { ok: true; body: ReadableStream<Uint8Array>; mimetype: string | null; size: number | null } | { ok: false; reason: string; transient: boolean };

/** A message template as the network lists it (WhatsApp: `GET /{waba-id}/message_templates`). */
export interface TemplateFromNetwork {
  name: string;
  language: string;
  externalId: string | null;
  status: string;
  category: string;
  components: Record<string, unknown>[];
  quality: string | null;
  rejectedReason: string | null;
}

/** A template to create, checked against the network's rules already (templates/rules.ts). */
export interface NewTemplate {
  name: string;
  language: string;
  category: string;
  components: Record<string, unknown>[];
  allowCategoryChange?: boolean;
}

/** What the network reports of a template (a status, quality or category change); absent fields are unchanged. */
export interface TemplateUpdate {
  name: string;
  language: string;
  externalId?: string | null;
  status?: string;
  quality?: string;
  category?: string;
  rejectedReason?: string | null;
}

/** A template call's answer: a network failure is not the session's (templates are the business account's). */
export type TemplateResult<T> = { ok: true; value: T } | { ok: false; error: FailureReason; transient?: boolean; status?: number };

/** Where a message's status can go (`failed` only from `pending` or `sent`). */
export type StatusTarget = "sent" | "delivered" | "read" | "failed";
/** How a status change is recorded (see `NetworkHost.statusChanged`). */
export interface StatusOptions {
  afterSent?: boolean;
  deliveredAt?: number;
}
/** Messages of one session, by our ids or by the network's. */
export type MessageSelector = { ids: string[] } | { externalIds: string[] };

/**
 * The port a driver depends on, implemented by the Session DO that holds it. A driver reports what
 * its network says (inbound messages, status changes) and the session records them, with their
 * events; what a driver needs to know of stored messages it asks here. No driver reaches a table,
 * the message store or another session by itself.
 */
export interface NetworkHost {
  /** The deployment's settings (sandbox delays, Graph API address). */
  config(): Config;
  /** The session as it is now (the phone number is learnt on connect). */
  identity(): { accountId: string; sessionId: string; phoneNumber: string | null };
  /** The network delivered a message: recorded once per network id; answers the row, or null for a replay. */
  received(m: InboundFromNetwork): Promise<MessageRow | null>;
  /**
   * The network moved messages of this session forward: recorded as steps never taken backwards, one
   * event per step. `afterSent`: they are known to be sent already (skips a no-op step). `deliveredAt`:
   * when a `read` that passes through `delivered` was delivered (default `at`). Answers the rows that
   * reached `target` now.
   */
  statusChanged(selector: MessageSelector, target: StatusTarget, at: number, error?: FailureReason, opts?: StatusOptions): Promise<MessageRow[]>;
  /** The sender edited an inbound message (its text, or its file's caption): answers the row, or null when unknown, deleted or edited later. */
  edited(externalId: string, change: { text?: string; caption?: string }, at: number): Promise<MessageRow | null>;
  /** The sender deleted an inbound message: its content is dropped. Answers the row, or null when unknown or already deleted. */
  revoked(externalId: string, at: number): Promise<MessageRow | null>;
  /** What the network adds to an outbound message's status: what it was charged, a failure's own code, title and details. */
  statusDetail(externalId: string, detail: Pick<Content, "pricing" | "networkError">): Promise<void>;
  /** The network reported the business account's standing (restricted, banned, reinstated): shown on the session. */
  accountHealth(health: SessionHealth): Promise<void>;
  /** A customer (digits) stopped (`optedOut`) or resumed marketing messages. */
  marketingPreference(from: string, optedOut: boolean): Promise<void>;
  /** The addresses of the account's contacts known by these BSUIDs: BSUID -> digits, or the BSUID itself for a contact with no number yet. */
  phonesOfUsers(userIds: string[]): Promise<Map<string, string>>;
  /** The network named the number (digits) of a person known so far only by this BSUID: the contact and its chat here take it. */
  numberKnown(userId: string, digits: string): Promise<void>;
  /** A person's number or BSUID changed: the contact (and for a number, its chat here) follow; recorded as an event. */
  identityChanged(notice: IdentityNotice): Promise<void>;
  /** A message sent from the business's other client on this number: recorded as outbound once per network id. */
  echoed(echo: EchoFromNetwork): Promise<MessageRow | null>;
  /** A call on this number: recorded as a call event. */
  called(call: CallFromNetwork): Promise<void>;
  /** A message of this session by our id or the network's. */
  message(key: { id: string } | { externalId: string }): Promise<MessageRow | undefined>;
  /** This session's messages sent or delivered at or before `cutoff`, in id order after `afterId`. */
  sentUnreadBefore(cutoff: number, limit: number, afterId: string): Promise<{ id: string; chatId: string }[]>;
  /** One chat's inbound messages not marked read, received by `upTo`, in id order after `afterId`. */
  unreadInbound(chatId: string, upTo: number, afterId: string, limit: number): Promise<{ id: string; externalId: string | null }[]>;
  /** Of these recipients (digits), when each last wrote to this session (absent: never, or long ago). */
  lastInboundAt(recipients: string[], since: number): Promise<Map<string, number>>;
  /** Networks shared by several sessions of the account (sandbox): the WORKING ones among these numbers, number -> session id. */
  peerSessions(numbers: string[]): Promise<Map<string, string>>;
  /** Hands a message to a peer session as its network would; answers whether it took it. */
  deliverToPeer(peerSessionId: string, inbound: InboundFromNetwork): Promise<boolean>;
  /** Of these message ids of the account, the outbound ones per sending session (a peer's read receipts). */
  outboundBySession(ids: string[]): Promise<{ id: string; sessionId: string; chatId: string }[]>;
  /** A peer session's messages were read here: their status moves at their sender. */
  peerStatusChanged(peerSessionId: string, ids: string[], target: "read", at: number): Promise<void>;
  /** The network reported a template change: the cached row is updated and `template.updated` emitted (null: no such template cached). */
  templateUpdated(update: TemplateUpdate): Promise<boolean>;
  /** This session's templates still PENDING, oldest first (at most `limit`). */
  pendingTemplates(limit: number): Promise<{ name: string; language: string; createdAt: number }[]>;
  /** The session's durable alarm fires no later than `at`. */
  wakeAt(at: number): Promise<void>;
}

/**
 * The one interface every network implements; the Session DO holds one per session and never asks
 * which network it is. The optional members are what a network adds to the session's life.
 */
export interface NetworkDriver {
  connect(): Promise<ConnectResult>;
  send(message: OutboundMessage): Promise<NetworkSendResult>;
  /**
   * Of these recipients (digits), those a free-form message (anything but a template) may not be
   * sent to now: the WhatsApp Cloud API's 24-hour customer-service window is closed. Checked before
   * a send reaches the network.
   */
  closedWindows?(recipients: string[]): Promise<Set<string>>;
  /** The bytes of a file the network holds for an inbound message (the Cloud API's media id). */
  fetchMedia?(networkMediaId: string): Promise<NetworkFile>;
  /** Tells the network the message it knows as `externalId` (and the chat's earlier ones) was read. */
  markRead?(externalId: string): Promise<NetworkSendResult>;
  /** Networks that answer at once, without I/O: the message is then recorded once, in its final state. */
  sendAtOnce?(message: OutboundMessage): NetworkSendResult;
  /** Messages the network has just accepted (status `sent`). */
  afterSent?(rows: MessageRow[], now: number): Promise<void>;
  /** The session's alarm starts: complete what was lost with the memory. */
  onAlarm?(): Promise<void>;
  /** The session's alarm ends: answers when the network needs the alarm again, if it does. */
  afterAlarm?(): Promise<number | null>;
  /** The session stopped: forget pending work. */
  stop?(): void;
  /** Templates: one page of the network's list (`after`: the previous page's cursor). Absent: the cache is the network's only copy (sandbox). */
  listTemplates?(after: string | null): Promise<TemplateResult<{ templates: TemplateFromNetwork[]; after: string | null }>>;
  /** Creates a template at the network: answers its id, status and category as the network set them (`reviewAt`: the session's alarm is wanted then, for a network that reviews it itself). */
  createTemplate?(t: NewTemplate): Promise<TemplateResult<{ externalId: string | null; status: string; category: string; reviewAt?: number }>>;
  /** Deletes a template by name (every language), or one by its network id. */
  deleteTemplate?(name: string, externalId: string | null): Promise<TemplateResult<null>>;
  /** Inbound test messages (`POST /api/sessions/{id}/sandbox/inbound`) are accepted. */
  readonly simulatesInbound?: boolean;
  /** The network's webhook for this session. */
  webhook?(req: HookRequest): Promise<{ status: number; body: string }>;
}
