import { z } from "@hono/zod-openapi";
import { PaginationQuery } from "../../platform/pagination.ts";
import { Contact } from "../contacts/schemas.ts";
import { Message } from "../messages/schemas.ts";

/** The Cloud API's customer-service window: free-form messages only within 24 hours of the customer's last message. */
export const SERVICE_WINDOW_MS = 24 * 60 * 60 * 1000;

const SessionIdField = z.string().min(1).max(64).openapi({ example: "ses_0m3x9k2a1b2c3d4e5f6g7h8" });

export const Chat = z
  .object({
    id: z.string().openapi({ example: "14155550123@c.us" }),
    sessionId: z.string(),
    contact: Contact.nullable().openapi({ description: "The contact of this number, if there is one." }),
    lastMessage: Message.nullable().openapi({ description: "null when the message was removed by retention." }),
    lastActivityAt: z.string(),
    unreadCount: z.number().int().openapi({ description: "Inbound messages not marked read yet." }),
    window: z
      .object({
        open: z.boolean(),
        until: z.string().nullable().openapi({ description: "When the 24-hour window of the customer's last message closes (past when closed); null before any." }),
      })
      .openapi({ description: "The 24-hour customer-service window: on whatsapp sessions, free-form messages need it open (templates do not)." }),
  })
  .openapi("Chat");
export type Chat = z.infer<typeof Chat>;

export const ChatListQuery = PaginationQuery.extend({
  sessionId: SessionIdField.openapi({ description: "The session whose chats to list." }),
});

export const ChatIdParam = z.object({
  chatId: z.string().max(160).openapi({ param: { name: "chatId", in: "path" }, example: "14155550123@c.us", description: "`<digits>@c.us` or `<digits>@s.whatsapp.net` (or E.164); `<BSUID>@bsuid` for a person known only by their WhatsApp BSUID." }),
});

export const MarkReadBody = z.strictObject({ sessionId: SessionIdField }).openapi("MarkChatRead");

export const ChatCursor = z.strictObject({ at: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER), chatId: z.string().min(1).max(160) });
