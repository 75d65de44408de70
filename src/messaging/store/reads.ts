import { and, count, desc, eq, gt, inArray, isNull, lt, lte, or, sql } from "drizzle-orm";
import { messages } from "../../db/schema/index.ts";
import { itemsPerStatement } from "../../platform/d1.ts";
import { chatIdOf } from "../chat-id.ts";
import type { MessageRow } from "../messages/mapper.ts";
import type { MessageStatus } from "../status.ts";
import type { Shard } from "../../platform/shards.ts";

/**
 * Reads of `messages` rows. The files of this folder are the only readers and writers of the
 * table (a test in test/unit/architecture.node.test.ts keeps it so); functions named
 * `...Statement(s)` / `...Query` answer statements for the caller's own D1 batch.
 */

/** Ids per `IN (...)` list, with room for the statement's own parameters. */
export const ID_CHUNK = itemsPerStatement(1, 20);

/**
 * Our ids of the messages of this chat that the network's ids name (a reply's context, a reaction's
 * target). The sandbox network names messages by our own ids, so those match too.
 */
export async function referencedIds(shard: Shard, sessionId: string, chatId: string, externalIds: (string | null | undefined)[]): Promise<Map<string, string>> {
  const wanted = [...new Set(externalIds.filter((x): x is string => !!x))];
  if (wanted.length === 0) return new Map();
  const rows = await shard.db
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


/** Messages of an account by id (for the caller's batch). */
export function messagesByIdsQuery(shard: Shard, accountId: string, ids: string[]) {
  return shard.db.select().from(messages).where(and(eq(messages.accountId, accountId), inArray(messages.id, ids)));
}


export async function messageById(shard: Shard, id: string): Promise<MessageRow | undefined> {
  return shard.db.select().from(messages).where(eq(messages.id, id)).get();
}

/** The rows among `ids` of this session still `pending`. */
export async function pendingOfSession(shard: Shard, sessionId: string, ids: string[]): Promise<MessageRow[]> {
  return shard.db
    .select()
    .from(messages)
    // `+`: by id, never a scan of the session's (pending) messages per chunk (a large bulk's or
    // campaign's backlog: a cost growing with its square).
    .where(and(eq(sql`+${messages.sessionId}`, sessionId), inArray(messages.id, ids), eq(sql`+${messages.status}`, "pending")))
    .all();
}

/** A message of one chat of one session (for replies), or undefined. */
export async function messageInChat(shard: Shard, accountId: string, sessionId: string, chatDigits: string, id: string): Promise<{ id: string; externalId: string | null } | undefined> {
  return shard.db
    .select({ id: messages.id, externalId: messages.externalId })
    .from(messages)
    .where(and(eq(messages.accountId, accountId), eq(messages.sessionId, sessionId), eq(messages.chatId, chatIdOf(chatDigits)), eq(messages.id, id)))
    .get();
}

/** A chat's messages, newest first: at most `limit` rows with ids below `beforeId`. */
export async function chatMessages(shard: Shard, accountId: string, chatDigits: string, q: { sessionId?: string; beforeId?: string; limit: number }): Promise<MessageRow[]> {
  return shard.db
    .select()
    .from(messages)
    .where(
      and(
        eq(messages.accountId, accountId),
        eq(messages.chatId, chatIdOf(chatDigits)),
        q.sessionId ? eq(messages.sessionId, q.sessionId) : undefined,
        q.beforeId ? lt(messages.id, q.beforeId) : undefined,
      ),
    )
    .orderBy(desc(messages.id))
    .limit(q.limit);
}

/** How many messages of a batch are in each status. */
export async function batchStatusCounts(shard: Shard, accountId: string, batchId: string): Promise<Map<MessageStatus, number>> {
  const rows = await shard.db
    .select({ status: messages.status, n: count() })
    .from(messages)
    .where(and(eq(messages.batchId, batchId), eq(messages.accountId, accountId)))
    .groupBy(messages.status)
    .all();
  return new Map(rows.map((r) => [r.status, r.n]));
}

/** This session's messages sent or delivered at or before `cutoff`, in id order after `afterId` (at most `limit`). */
export async function unreadSentBefore(shard: Shard, sessionId: string, cutoff: number, limit: number, afterId = ""): Promise<{ id: string; chatId: string }[]> {
  return shard.db
    .select({ id: messages.id, chatId: messages.chatId })
    .from(messages)
    .where(and(eq(messages.sessionId, sessionId), inArray(messages.status, ["sent", "delivered"]), lte(messages.sentAt, cutoff), gt(messages.id, afterId)))
    .orderBy(messages.id)
    .limit(limit)
    .all();
}

/**
 * The network ids of one chat's inbound messages not marked read yet and received no later than
 * `upTo`, in id order after `afterId` (at most `limit`): what a read of the chat covers (the same
 * rows as `markInboundReadStatement`).
 */
export async function unreadInboundOfChat(shard: Shard, accountId: string, sessionId: string, chatId: string, upTo: number, afterId: string, limit: number): Promise<{ id: string; externalId: string | null }[]> {
  return shard.db
    .select({ id: messages.id, externalId: messages.externalId })
    .from(messages)
    .where(and(eq(messages.accountId, accountId), eq(messages.sessionId, sessionId), eq(messages.chatId, chatId), gt(messages.id, afterId), eq(messages.direction, "inbound"), isNull(messages.readAt), lte(messages.createdAt, upTo)))
    .orderBy(messages.id)
    .limit(limit)
    .all();
}

/** A session's message by its network id. */
export async function messageByExternalId(shard: Shard, sessionId: string, externalId: string): Promise<MessageRow | undefined> {
  return shard.db.select().from(messages).where(and(eq(messages.sessionId, sessionId), eq(messages.externalId, externalId))).get();
}

