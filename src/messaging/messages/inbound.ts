import { and, eq, inArray, or, sql } from "drizzle-orm";
import { getDb } from "../../db/client.ts";
import { messages } from "../../db/schema/index.ts";
import { enqueueEvents, prepareEventAfterChange } from "../../events/emit.ts";
import { newId } from "../../platform/ids.ts";
import { chatIdOf } from "../chat-id.ts";
import { ensureContactStatements } from "../contacts/service.ts";
import { enqueueMediaFetch, needsFetch } from "../media/inbound.ts";
import type { InboundFromNetwork, InboundMedia } from "../networks/driver.ts";
import { toMessage, type MessageRow, type StoredMedia } from "./mapper.ts";

/** A whole-message `STOP` (any case, surrounding spaces ignored) opts the sender out. */
export function isStop(text: string | undefined): boolean {
  return text?.trim().toUpperCase() === "STOP";
}

/**
 * Records one inbound message: deduplicated on (session, network id) so a replayed webhook stores
 * nothing new; the sender becomes a contact when unknown (`contact.created`, with the session it
 * came in on); then `message.received`. One D1 round trip: each row with its event, the event
 * recorded only if the row was. Returns the stored row, or null for a duplicate.
 * `enqueue` takes the recorded events' ids (the Session DO coalesces them); default: enqueue now.
 */
export async function recordInbound(env: Env, accountId: string, sessionId: string, m: InboundFromNetwork, opts: { enqueue?: (eventIds: string[]) => void } = {}): Promise<MessageRow | null> {
  const db = getDb(env.DB);
  const chatId = chatIdOf(m.from);
  const refs = await referencedIds(env, sessionId, chatId, [m.contextExternalId, m.reactionToExternalId]);
  let content = m.content;
  if (content?.reaction && m.reactionToExternalId) content = { ...content, reaction: { ...content.reaction, messageId: refs.get(m.reactionToExternalId) ?? null } };
  const row: MessageRow = {
    id: newId("msg"),
    accountId,
    sessionId,
    chatId,
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
  const contact = ensureContactStatements(env, accountId, m.from, m.profileName, isStop(m.text), sessionId);
  const received = prepareEventAfterChange(env, { type: "message.received", accountId, sessionId, data: toMessage(row) });
  const insert = db.insert(messages).values(row).onConflictDoNothing().returning({ id: messages.id });
  // A reaction also lands on the message it reacts to (when we have it).
  const target = content?.reaction?.messageId;
  const react = target ? [reactionStatement(env, target, chatId, content!.reaction!.emoji, row.id)] : [];
  const results = await db.batch([...contact.statements, insert, received.statement, ...react]);
  const inserted = results[contact.statements.length] as { id: string }[];
  const ids = [contact.created(results[0] as { id: string }[]), inserted.length > 0 ? received.event.id : null].filter((id): id is string => id !== null);
  if (ids.length > 0) {
    if (opts.enqueue) opts.enqueue(ids);
    else await enqueueEvents(env, ids);
  }
  if (inserted.length === 0) return null;
  // Network download URLs expire within minutes: the file is fetched now, through the queue.
  if (m.media && needsFetch(m.media)) await enqueueMediaFetch(env, sessionId, [row.id]);
  return row;
}

/** The media column of an inbound file: `pending` until fetched, `stored` when already in R2. */
function inboundMedia(m: InboundMedia): StoredMedia {
  const status = m.mediaId ? "stored" : needsFetch(m) ? "pending" : "failed";
  return { url: null, size: null, mediaId: null, origin: null, ...m, status, ...(status === "failed" ? { reason: "The network named no file." } : {}) };
}

/**
 * Our ids of the messages of this chat that the network's ids name (a reply's context, a reaction's
 * target). The sandbox network names messages by our own ids, so those match too.
 */
async function referencedIds(env: Env, sessionId: string, chatId: string, externalIds: (string | undefined)[]): Promise<Map<string, string>> {
  const wanted = [...new Set(externalIds.filter((x): x is string => !!x))];
  if (wanted.length === 0) return new Map();
  const rows = await getDb(env.DB)
    .select({ id: messages.id, externalId: messages.externalId })
    .from(messages)
    .where(and(eq(messages.sessionId, sessionId), eq(messages.chatId, chatId), or(inArray(messages.externalId, wanted), inArray(messages.id, wanted))))
    .all();
  const found = new Map<string, string>();
  for (const r of rows) {
    found.set(r.id, r.id);
    if (r.externalId) found.set(r.externalId, r.id);
  }
  return found;
}

/**
 * Sets (or, with an empty emoji, removes) `who`'s reaction on message `targetId`. `onlyIfStored`:
 * applied only when that message id exists (the reaction's own row, inserted earlier in the same
 * batch), so a replayed old reaction never overwrites a newer one.
 */
export function reactionStatement(env: Env, targetId: string, who: string, emoji: string, onlyIfStored: string) {
  // `who` is `<digits>@c.us` or `me`: safe inside a quoted JSON path label.
  const path = `$."${who}"`;
  return getDb(env.DB)
    .update(messages)
    .set({ reactions: emoji ? sql`json_set(coalesce(${messages.reactions}, '{}'), ${path}, ${emoji})` : sql`json_remove(coalesce(${messages.reactions}, '{}'), ${path})` })
    .where(and(eq(messages.id, targetId), sql`exists (select 1 from ${messages} where ${messages.id} = ${onlyIfStored})`));
}
