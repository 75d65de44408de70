import { and, eq, gte, isNull, lte, sql } from "drizzle-orm";
import { getDb } from "../../db/client.ts";
import { messages } from "../../db/schema/index.ts";
import type { MessageRow } from "../messages/mapper.ts";

/** Single-row writes of `messages` (inserts, the network's id, reactions, reads of a chat). */

/**
 * Sets (or, with an empty emoji, removes) `who`'s reaction on message `targetId`. `onlyIfStored`:
 * applied only when that message id exists (the reaction's own row, inserted earlier in the same
 * batch), so a replayed old reaction never overwrites a newer one. For the caller's batch.
 */
export function reactionStatement(env: Env, targetId: string, who: string, emoji: string, onlyIfStored: string) {
  // `who` is `<digits>@c.us` or `me`: safe inside a quoted JSON path label.
  const path = `$."${who}"`;
  return getDb(env.DB)
    .update(messages)
    .set({ reactions: emoji ? sql`json_set(coalesce(${messages.reactions}, '{}'), ${path}, ${emoji})` : sql`json_remove(coalesce(${messages.reactions}, '{}'), ${path})` })
    .where(and(eq(messages.id, targetId), sql`exists (select 1 from ${messages} where ${messages.id} = ${onlyIfStored})`));
}


/**
 * Marks read a chat's unread inbound messages from `fromId` on, received no later than `upTo` (the
 * last one the network was told about; later arrivals stay unread). For the caller's batch: the
 * next statement may count them with SQLite's `changes()`.
 */
export function markInboundReadStatement(env: Env, accountId: string, sessionId: string, chatId: string, fromId: string, upTo: number, at: number) {
  return getDb(env.DB)
    .update(messages)
    .set({ readAt: at })
    .where(and(eq(messages.accountId, accountId), eq(messages.sessionId, sessionId), eq(messages.chatId, chatId), gte(messages.id, fromId), eq(messages.direction, "inbound"), isNull(messages.readAt), lte(messages.createdAt, upTo)));
}

/** Inserts one row (for the caller's batch). */
export function insertStatement(env: Env, row: MessageRow) {
  return getDb(env.DB).insert(messages).values(row);
}

/** Inserts an inbound row unless the session already has its network id; answers `[{ id }]` when inserted (for the caller's batch). */
export function insertInboundStatement(env: Env, row: MessageRow) {
  return getDb(env.DB).insert(messages).values(row).onConflictDoNothing().returning({ id: messages.id });
}

export async function insertMessage(env: Env, row: MessageRow): Promise<void> {
  await insertStatement(env, row);
}

/** Records the network's id of a sent message. */
export async function setExternalId(env: Env, id: string, externalId: string): Promise<void> {
  await getDb(env.DB).update(messages).set({ externalId }).where(eq(messages.id, id));
}

