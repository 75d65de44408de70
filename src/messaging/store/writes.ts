import { and, eq, gte, isNull, lte, sql } from "drizzle-orm";
import { messages } from "../../db/schema/index.ts";
import type { MessageRow } from "../messages/mapper.ts";
import type { Shard } from "../../platform/shards.ts";

/** Single-row writes of `messages` (inserts, the network's id, reactions, reads of a chat). */

/**
 * Sets (or, with an empty emoji, removes) `who`'s reaction on message `targetId`. `onlyIfStored`:
 * applied only when that message id exists (the reaction's own row, inserted earlier in the same
 * batch), so a replayed old reaction never overwrites a newer one. For the caller's batch.
 */
export function reactionStatement(shard: Shard, targetId: string, who: string, emoji: string, onlyIfStored: string) {
  // `who` is `<digits>@c.us` or `me`: safe inside a quoted JSON path label.
  const path = `$."${who}"`;
  return shard.db
    .update(messages)
    .set({ reactions: emoji ? sql`json_set(coalesce(${messages.reactions}, '{}'), ${path}, ${emoji})` : sql`json_remove(coalesce(${messages.reactions}, '{}'), ${path})` })
    .where(and(eq(messages.id, targetId), sql`exists (select 1 from ${messages} where ${messages.id} = ${onlyIfStored})`));
}


/**
 * Marks read a chat's unread inbound messages from `fromId` on, received no later than `upTo` (the
 * last one the network was told about; later arrivals stay unread). For the caller's batch: the
 * next statement may count them with SQLite's `changes()`.
 */
export function markInboundReadStatement(shard: Shard, accountId: string, sessionId: string, chatId: string, fromId: string, upTo: number, at: number) {
  return shard.db
    .update(messages)
    .set({ readAt: at })
    .where(and(eq(messages.accountId, accountId), eq(messages.sessionId, sessionId), eq(messages.chatId, chatId), gte(messages.id, fromId), eq(messages.direction, "inbound"), isNull(messages.readAt), lte(messages.createdAt, upTo)));
}

/** Inserts one row (for the caller's batch). */
export function insertStatement(shard: Shard, row: MessageRow) {
  return shard.db.insert(messages).values(row);
}

/** Inserts an inbound row unless the session already has its network id; answers `[{ id }]` when inserted (for the caller's batch). */
export function insertInboundStatement(shard: Shard, row: MessageRow) {
  return shard.db.insert(messages).values(row).onConflictDoNothing().returning({ id: messages.id });
}

export async function insertMessage(shard: Shard, row: MessageRow): Promise<void> {
  await insertStatement(shard, row);
}

/** Records the network's id of a sent message. */
export async function setExternalId(shard: Shard, id: string, externalId: string): Promise<void> {
  await shard.db.update(messages).set({ externalId }).where(eq(messages.id, id));
}

