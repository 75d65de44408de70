import { chatIdOf } from "../chat-id.ts";
import { needsFetch } from "../media/limits.ts";
import type { Content } from "../messages/content.ts";
import type { MessageRow, StoredMedia } from "../messages/mapper.ts";
import type { TemplateSpec } from "../messages/schemas.ts";
import type { FailureReason, InboundFromNetwork, InboundMedia } from "../networks/driver.ts";

/** `messages` rows built from typed inputs (no I/O): what the writers insert. */


/** An outbound message as its sender knows it (`to`: the recipient's digits). */
export interface NewOutbound {
  id: string;
  accountId: string;
  sessionId: string;
  to: string;
  type: MessageRow["type"];
  text?: string | null;
  template?: TemplateSpec | null;
  media?: StoredMedia | null;
  content?: Content | null;
  replyTo?: string | null;
  batchId?: string | null;
  campaignId?: string | null;
  createdAt: number;
}

/** Where an outbound row starts: `pending` (queued or sending over I/O), or its final send state. */
export type OutboundState = { status: "pending" } | { status: "sent"; sentAt: number } | { status: "failed"; error: FailureReason };

export function outboundRow(m: NewOutbound, state: OutboundState): MessageRow {
  return {
    id: m.id,
    accountId: m.accountId,
    sessionId: m.sessionId,
    chatId: chatIdOf(m.to),
    direction: "outbound",
    type: m.type,
    text: m.text ?? null,
    template: m.template ? JSON.stringify(m.template) : null,
    media: m.media ? JSON.stringify(m.media) : null,
    content: m.content ? JSON.stringify(m.content) : null,
    reactions: null,
    status: state.status,
    errorCode: state.status === "failed" ? state.error.code : null,
    errorMessage: state.status === "failed" ? state.error.message : null,
    externalId: null,
    replyTo: m.replyTo ?? null,
    batchId: m.batchId ?? null,
    campaignId: m.campaignId ?? null,
    createdAt: m.createdAt,
    sentAt: state.status === "sent" ? state.sentAt : null,
    deliveredAt: null,
    readAt: null,
  };
}

/** The media column of an inbound file: `pending` until fetched, `stored` when already in R2. */
function inboundMedia(m: InboundMedia): StoredMedia {
  const status = m.mediaId ? "stored" : needsFetch(m) ? "pending" : "failed";
  return { url: null, size: null, mediaId: null, origin: null, ...m, status, ...(status === "failed" ? { reason: "The network named no file." } : {}) };
}

/**
 * An inbound message as received from its network. `refs`: our ids of the messages its network
 * ids name (see `referencedIds`), for its reply context and a reaction's target.
 */
export function inboundRow(id: string, accountId: string, sessionId: string, m: InboundFromNetwork, refs: Map<string, string> = new Map()): MessageRow {
  let content = m.content;
  if (content?.reaction && m.reactionToExternalId) content = { ...content, reaction: { ...content.reaction, messageId: refs.get(m.reactionToExternalId) ?? null } };
  return {
    id,
    accountId,
    sessionId,
    chatId: chatIdOf(m.from),
    direction: "inbound",
    type: m.type,
    text: m.text ?? null,
    template: m.template ? JSON.stringify(m.template) : null,
    media: m.media ? JSON.stringify(inboundMedia(m.media)) : null,
    content: content ? JSON.stringify(content) : null,
    reactions: null,
    status: "received",
    errorCode: null,
    errorMessage: null,
    externalId: m.externalId,
    replyTo: (m.contextExternalId && refs.get(m.contextExternalId)) || null,
    batchId: null,
    campaignId: null,
    createdAt: m.timestamp,
    sentAt: null,
    deliveredAt: null,
    readAt: null,
  };
}
