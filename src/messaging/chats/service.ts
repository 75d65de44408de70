import { and, desc, eq, lt, or, sql } from "drizzle-orm";
import { chats } from "../../db/schema/index.ts";
import { ApiError, errors } from "../../platform/errors.ts";
import { decodeCursor, toPage } from "../../platform/pagination.ts";
import { ACCEPTED_CHAT_FORMS, chatIdOf, contactKeyOf, digitsOfChatId, parseChatAddress } from "../chat-id.ts";
import { toContact } from "../contacts/mapper.ts";
import { contactsByPhonesQuery } from "../contacts/service.ts";
import { toMessage } from "../messages/mapper.ts";
import { commitSessionWrites, loadSession } from "../sessions/service.ts";
import { sessionStub } from "../sessions/session-do.ts";
import { messageById, messagesByIdsQuery } from "../store/reads.ts";
import { markInboundReadStatement } from "../store/writes.ts";
import { toChat, type ChatRow } from "./mapper.ts";
import { ChatCursor, type Chat } from "./schemas.ts";
import { accountShard } from "../../platform/shards.ts";

/** Chats with their last messages and contacts: two reads in one D1 round trip, whatever the page size. */
async function withDetails(env: Env, accountId: string, rows: ChatRow[]): Promise<Chat[]> {
  if (rows.length === 0) return [];
  const shard = await accountShard(env, accountId);
  const { db } = shard;
  const [lastMessages, people] = await db.batch([
    messagesByIdsQuery(shard, accountId, rows.map((r) => r.lastMessageId)),
    contactsByPhonesQuery(shard, accountId, [...new Set(rows.map((r) => contactKeyOf(digitsOfChatId(r.chatId))))]),
  ]);
  const byId = new Map(lastMessages.map((m) => [m.id, toMessage(m)]));
  const byPhone = new Map(people.map((p) => [p.phone, toContact(p)]));
  const now = Date.now();
  return rows.map((r) => toChat(r, byId.get(r.lastMessageId) ?? null, byPhone.get(contactKeyOf(digitsOfChatId(r.chatId))) ?? null, now));
}

export async function listChats(env: Env, accountId: string, q: { sessionId: string; limit: number; cursor?: string }) {
  await loadSession(env, accountId, q.sessionId);
  await commitSessionWrites(env, accountId, q.sessionId);
  const cursor = decodeCursor(q.cursor, ChatCursor);
  const rows = await (await accountShard(env, accountId)).db
    .select()
    .from(chats)
    .where(
      and(
        eq(chats.accountId, accountId),
        eq(chats.sessionId, q.sessionId),
        cursor ? or(lt(chats.lastMessageAt, cursor.at), and(eq(chats.lastMessageAt, cursor.at), lt(chats.chatId, cursor.chatId))) : undefined,
      ),
    )
    .orderBy(desc(chats.lastMessageAt), desc(chats.chatId))
    .limit(q.limit + 1);
  const page = toPage(rows, q.limit, (r) => ({ at: r.lastMessageAt, chatId: r.chatId }));
  return { data: await withDetails(env, accountId, page.data), nextCursor: page.nextCursor };
}

/**
 * Marks a chat's inbound messages read. The network is told first (whatsapp: `status: read` for
 * the last inbound message; sandbox: the sending session's messages become `read`); if it refuses,
 * nothing is written and the error is answered.
 */
export async function markChatRead(env: Env, accountId: string, rawChatId: string, sessionId: string): Promise<Chat> {
  const digits = parseChatAddress(rawChatId);
  if (!digits) throw errors.invalidRequest(`The chat id must be ${ACCEPTED_CHAT_FORMS}.`, [{ path: "chatId", message: "not a valid chat id" }]);
  const session = await loadSession(env, accountId, sessionId);
  const shard = await accountShard(env, accountId);
  const { db } = shard;
  const where = and(eq(chats.accountId, accountId), eq(chats.sessionId, sessionId), eq(chats.chatId, chatIdOf(digits)));
  const row = await db.select().from(chats).where(where).get();
  if (!row) throw errors.notFound("chat");
  if (row.unreadCount === 0 || !row.firstUnreadId) return (await withDetails(env, accountId, [row]))[0]!;
  if (row.lastInboundId) {
    const last = await messageById(shard, row.lastInboundId);
    if (last?.externalId) {
      const res = await sessionStub(env, sessionId).markRead(accountId, last.externalId);
      if (!res.ok) {
        if (res.code === "not_found") throw errors.notFound("session");
        if (res.retry) throw errors.unavailable(res.message, 30);
        throw new ApiError(409, res.code, res.message, res.code === "session_not_working" ? { status: session.status } : {});
      }
    }
  }
  const now = Date.now();
  const [, updated] = await db.batch([
    // Up to the last inbound message the network was told about: messages that arrived since `row`
    // was read stay unread, and the count drops by exactly the messages marked (`changes()` of the
    // statement before, in the same transaction), so the count and the messages agree.
    markInboundReadStatement(shard, accountId, sessionId, row.chatId, row.firstUnreadId, row.lastInboundAt ?? now, now),
    db
      .update(chats)
      .set({
        unreadCount: sql`max(0, ${chats.unreadCount} - changes())`,
        firstUnreadId: sql`case when ${chats.unreadCount} - changes() <= 0 then null else ${chats.firstUnreadId} end`,
        readAt: now,
      })
      .where(where)
      .returning(),
  ]);
  return (await withDetails(env, accountId, updated.length ? updated : [row]))[0]!;
}
