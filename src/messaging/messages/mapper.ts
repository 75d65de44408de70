import type { messages } from "../../db/schema/index.ts";
import type { Content } from "./content.ts";
import type { MediaInfo, Message, TemplateSpec } from "./schemas.ts";
import { iso } from "../../platform/time.ts";

export type MessageRow = typeof messages.$inferSelect;

/** What the media column holds: the public part plus where uploaded bytes live. */
export interface StoredMedia extends MediaInfo {
  mediaId: string | null;
  /** Origin of the API that stored it, to build signed URLs from a queue or alarm. */
  origin: string | null;
  /** Inbound: the network's id of the file (the Cloud API's media id), to download it. */
  networkMediaId?: string | null;
  sha256?: string | null;
  /** Inbound: a public URL to fetch the bytes from (sandbox). */
  sourceUrl?: string | null;
  /** Inbound, still pending: times the cron's sweep queued the fetch again, and when it last did. */
  sweeps?: number;
  sweptAt?: number;
}

export function toMessage(row: MessageRow): Message {
  const out: Message = {
    id: row.id,
    sessionId: row.sessionId,
    chatId: row.chatId,
    direction: row.direction,
    type: row.type,
    status: row.status,
    replyTo: row.replyTo,
    batchId: row.batchId,
    campaignId: row.campaignId,
    createdAt: new Date(row.createdAt).toISOString(),
    sentAt: iso(row.sentAt),
    deliveredAt: iso(row.deliveredAt),
    readAt: iso(row.readAt),
  };
  if (row.text !== null) out.text = row.text;
  if (row.template !== null) out.template = JSON.parse(row.template) as TemplateSpec;
  if (row.media !== null) {
    const m = JSON.parse(row.media) as StoredMedia;
    out.media = { url: m.url, mimetype: m.mimetype, filename: m.filename, caption: m.caption, size: m.size };
    if (m.voice !== undefined) out.media.voice = m.voice;
    if (m.animated !== undefined) out.media.animated = m.animated;
    if (m.status !== undefined) out.media.status = m.status;
    if (m.reason) out.media.reason = m.reason;
  }
  if (row.content !== null) Object.assign(out, JSON.parse(row.content) as Content);
  if (row.reactions !== null) {
    const reactions = Object.entries(JSON.parse(row.reactions) as Record<string, string>).map(([from, emoji]) => ({ from, emoji }));
    if (reactions.length > 0) out.reactions = reactions;
  }
  if (row.errorCode !== null) out.error = { code: row.errorCode, message: row.errorMessage ?? "" };
  return out;
}
