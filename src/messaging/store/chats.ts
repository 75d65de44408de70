import { and, eq, gt, inArray, sql } from "drizzle-orm";
import { chats, messages } from "../../db/schema/index.ts";
import { chunk } from "../../platform/batching.ts";
import { chatIdOf, digitsOfChatId } from "../chat-id.ts";
import { ID_CHUNK } from "./reads.ts";
import type { Shard } from "../../platform/shards.ts";

/** `chats`, the per-chat summary that triggers on `messages` keep (migrations): reads, and a chat's move. */

/** Of these recipients (digits), those who last wrote to the session after `since`: digits -> when. */
export async function lastInboundSince(shard: Shard, sessionId: string, recipients: string[], since: number): Promise<Map<string, number>> {
  const found = new Map<string, number>();
  for (const part of chunk(recipients, ID_CHUNK)) {
    const rows = await shard.db
      .select({ chatId: chats.chatId, at: chats.lastInboundAt })
      .from(chats)
      .where(and(eq(chats.sessionId, sessionId), inArray(chats.chatId, part.map(chatIdOf)), gt(chats.lastInboundAt, since)))
      .all();
    for (const r of rows) if (r.at !== null) found.set(digitsOfChatId(r.chatId), r.at);
  }
  return found;
}

/**
 * Moves a chat of a session to another chat id (the person changed their number, or their number
 * became known): its messages, the person's reactions on them (keyed by chat id) and its summary
 * row, merged into the new chat's when that one exists already. For the caller's batch.
 */
export function moveChatStatements(shard: Shard, accountId: string, sessionId: string, from: string, to: string) {
  const { db } = shard;
  // Chat ids are digits or a BSUID (letters, digits, dots) before "@": safe inside a quoted JSON path label.
  const fromPath = `$."${from}"`;
  const toPath = `$."${to}"`;
  return [
    db.update(messages).set({ chatId: to }).where(and(eq(messages.accountId, accountId), eq(messages.sessionId, sessionId), eq(messages.chatId, from))),
    // A reaction the person made under the new id (after a merge) is their latest: it stays.
    db
      .update(messages)
      .set({ reactions: sql`json_remove(json_set(${messages.reactions}, ${toPath}, coalesce(json_extract(${messages.reactions}, ${toPath}), json_extract(${messages.reactions}, ${fromPath}))), ${fromPath})` })
      .where(and(eq(messages.accountId, accountId), eq(messages.sessionId, sessionId), eq(messages.chatId, to), sql`json_extract(${messages.reactions}, ${fromPath}) is not null`)),
    db
      .insert(chats)
      .select(
        sql`SELECT account_id, session_id, ${to}, last_message_id, last_message_at, last_inbound_id, last_inbound_at, unread_count, first_unread_id, read_at
            FROM chats WHERE session_id = ${sessionId} AND chat_id = ${from} AND account_id = ${accountId}`,
      )
      .onConflictDoUpdate({
        target: [chats.sessionId, chats.chatId],
        set: {
          lastMessageId: sql`CASE WHEN excluded.last_message_at >= chats.last_message_at THEN excluded.last_message_id ELSE chats.last_message_id END`,
          lastMessageAt: sql`max(chats.last_message_at, excluded.last_message_at)`,
          lastInboundId: sql`CASE WHEN excluded.last_inbound_at IS NOT NULL AND excluded.last_inbound_at >= coalesce(chats.last_inbound_at, 0) THEN excluded.last_inbound_id ELSE chats.last_inbound_id END`,
          lastInboundAt: sql`CASE WHEN excluded.last_inbound_at IS NULL THEN chats.last_inbound_at WHEN chats.last_inbound_at IS NULL THEN excluded.last_inbound_at ELSE max(chats.last_inbound_at, excluded.last_inbound_at) END`,
          unreadCount: sql`chats.unread_count + excluded.unread_count`,
          firstUnreadId: sql`CASE WHEN chats.first_unread_id IS NULL THEN excluded.first_unread_id WHEN excluded.first_unread_id IS NULL THEN chats.first_unread_id ELSE min(chats.first_unread_id, excluded.first_unread_id) END`,
        },
      }),
    db.delete(chats).where(and(eq(chats.accountId, accountId), eq(chats.sessionId, sessionId), eq(chats.chatId, from))),
  ] as const;
}
