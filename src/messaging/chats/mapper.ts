import type { chats } from "../../db/schema/index.ts";
import type { Contact } from "../contacts/schemas.ts";
import type { Message } from "../messages/schemas.ts";
import { SERVICE_WINDOW_MS, type Chat } from "./schemas.ts";

export type ChatRow = typeof chats.$inferSelect;

/** Until when the customer-service window of a chat is open (null: the customer never wrote). */
export function windowUntil(lastInboundAt: number | null): number | null {
  return lastInboundAt === null ? null : lastInboundAt + SERVICE_WINDOW_MS;
}

export function toChat(row: ChatRow, lastMessage: Message | null, contact: Contact | null, now: number): Chat {
  const until = windowUntil(row.lastInboundAt);
  return {
    id: row.chatId,
    sessionId: row.sessionId,
    contact,
    lastMessage,
    lastActivityAt: new Date(row.lastMessageAt).toISOString(),
    unreadCount: row.unreadCount,
    window: { open: until !== null && now < until, until: until === null ? null : new Date(until).toISOString() },
  };
}
