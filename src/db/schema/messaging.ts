import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

/**
 * Messaging sessions: the queryable mirror of each Session Durable Object. Network credentials live
 * only in the Durable Object's own storage; here we only record whether they are set.
 */
export const messagingSessions = sqliteTable(
  "messaging_sessions",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id").notNull(),
    name: text("name").notNull(),
    network: text("network", { enum: ["sandbox", "whatsapp"] }).notNull(),
    status: text("status", { enum: ["STARTING", "WORKING", "FAILED", "STOPPED"] }).notNull(),
    statusReason: text("status_reason"),
    /** Digits only (E.164 without "+"); null until the network tells us. */
    phoneNumber: text("phone_number"),
    credentialsSet: integer("credentials_set", { mode: "boolean" }).notNull().default(false),
    /** Bulk pacing (messages per minute); null = unpaced. */
    sendRatePerMinute: integer("send_rate_per_minute"),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [index("msg_sessions_account_idx").on(t.accountId, t.id), index("msg_sessions_phone_idx").on(t.accountId, t.phoneNumber)],
);

/** Message types, in both directions (messaging/message-types.ts gives their meaning). */
export const MESSAGE_TYPES = ["text", "template", "image", "video", "audio", "document", "sticker", "location", "contacts", "interactive", "button", "reaction", "order", "unsupported"] as const;

export const messages = sqliteTable(
  "messages",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id").notNull(),
    sessionId: text("session_id").notNull(),
    /** `<digits>@c.us` */
    chatId: text("chat_id").notNull(),
    direction: text("direction", { enum: ["inbound", "outbound"] }).notNull(),
    type: text("type", { enum: MESSAGE_TYPES }).notNull(),
    text: text("text"),
    /** JSON: {name, language, components?} */
    template: text("template"),
    /** JSON: {url?, mimetype?, filename?, caption?, size?, r2Key?} */
    media: text("media"),
    /** JSON: the typed body of the other types ({location}, {contacts}, {interactive}, {reaction}, ...) */
    content: text("content"),
    /** JSON: {"<chatId>|me": "<emoji>"}, one reaction per person */
    reactions: text("reactions"),
    status: text("status", { enum: ["pending", "sent", "delivered", "read", "failed", "received"] }).notNull(),
    errorCode: text("error_code"),
    errorMessage: text("error_message"),
    /** The network's id of the message (wamid for the Cloud API); inbound deduplication key. */
    externalId: text("external_id"),
    replyTo: text("reply_to"),
    batchId: text("batch_id"),
    /** Set by campaigns. */
    campaignId: text("campaign_id"),
    createdAt: integer("created_at").notNull(),
    sentAt: integer("sent_at"),
    deliveredAt: integer("delivered_at"),
    readAt: integer("read_at"),
  },
  (t) => [
    index("messages_chat_idx").on(t.accountId, t.chatId, t.id),
    index("messages_session_chat_idx").on(t.accountId, t.sessionId, t.chatId, t.id),
    uniqueIndex("messages_external_idx").on(t.sessionId, t.externalId),
    index("messages_session_status_idx").on(t.sessionId, t.status, t.sentAt),
    index("messages_batch_idx").on(t.batchId, t.status),
    index("messages_campaign_idx").on(t.campaignId, t.status),
  ],
);

export const messageBatches = sqliteTable(
  "message_batches",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id").notNull(),
    sessionId: text("session_id").notNull(),
    total: integer("total").notNull(),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [index("message_batches_account_idx").on(t.accountId, t.id)],
);

export const contacts = sqliteTable(
  "contacts",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id").notNull(),
    /** E.164 with "+" */
    phone: text("phone").notNull(),
    name: text("name"),
    email: text("email"),
    /** JSON array of strings */
    tags: text("tags").notNull().default("[]"),
    /** JSON object */
    attributes: text("attributes").notNull().default("{}"),
    optedOut: integer("opted_out", { mode: "boolean" }).notNull().default(false),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [uniqueIndex("contacts_account_phone_idx").on(t.accountId, t.phone), index("contacts_account_idx").on(t.accountId, t.id)],
);

/**
 * One row per conversation of a session, so listing chats never groups over `messages`. Kept by
 * the `messages_chat_activity` trigger (migrations) on every message insert, in the same statement
 * as the insert whoever writes it; `POST /api/chats/{chatId}/read` clears the unread part.
 */
export const chats = sqliteTable(
  "chats",
  {
    accountId: text("account_id").notNull(),
    sessionId: text("session_id").notNull(),
    /** `<digits>@c.us` */
    chatId: text("chat_id").notNull(),
    lastMessageId: text("last_message_id").notNull(),
    lastMessageAt: integer("last_message_at").notNull(),
    /** The customer's last message: opens the 24-hour customer-service window. */
    lastInboundId: text("last_inbound_id"),
    lastInboundAt: integer("last_inbound_at"),
    /** Inbound messages since the chat was last marked read. */
    unreadCount: integer("unread_count").notNull().default(0),
    /** The oldest of them (bounds the range marked read). */
    firstUnreadId: text("first_unread_id"),
    readAt: integer("read_at"),
  },
  (t) => [primaryKey({ columns: [t.sessionId, t.chatId] }), index("chats_activity_idx").on(t.accountId, t.sessionId, t.lastMessageAt, t.chatId)],
);
