import { sql } from "drizzle-orm";
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { accountId, accountListIndex, accountRow, chatId, contactCard, counter, createdAt, jsonText, sessionId, sessionRow, timestamps } from "./columns.ts";

/**
 * Messaging sessions: the queryable mirror of each Session Durable Object. Network credentials live
 * only in the Durable Object's own storage; here we only record whether they are set.
 */
export const messagingSessions = sqliteTable(
  "messaging_sessions",
  {
    ...accountRow(),
    name: text("name").notNull(),
    network: text("network", { enum: ["sandbox", "whatsapp"] }).notNull(),
    status: text("status", { enum: ["STARTING", "WORKING", "FAILED", "STOPPED"] }).notNull(),
    statusReason: text("status_reason"),
    /** Digits only (E.164 without "+"); null until the network tells us. */
    phoneNumber: text("phone_number"),
    credentialsSet: integer("credentials_set", { mode: "boolean" }).notNull().default(false),
    /** Bulk pacing (messages per minute); null = unpaced. */
    sendRatePerMinute: integer("send_rate_per_minute"),
    /** JSON: the sending limits the session was created with (SendLimitsInput); null: its network's defaults. */
    limits: text("limits"),
    /** JSON: the business account's standing as the network last reported it (SessionHealth); null: nothing reported. */
    health: text("health"),
    ...timestamps(),
  },
  (t) => [accountListIndex("msg_sessions_account_idx", t), index("msg_sessions_phone_idx").on(t.accountId, t.phoneNumber)],
);

/** Message types, in both directions (messaging/message-types.ts gives their meaning). */
export const MESSAGE_TYPES = ["text", "template", "image", "video", "audio", "document", "sticker", "location", "contacts", "interactive", "button", "reaction", "order", "unsupported", "system"] as const;

export const messages = sqliteTable(
  "messages",
  {
    ...sessionRow(),
    chatId: chatId(),
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
    createdAt: createdAt(),
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
    // Inbound files still to fetch, for the cron's sweep: only the few pending rows are in it.
    index("messages_pending_media_idx").on(t.createdAt).where(sql`json_extract(media, '$.status') = 'pending'`),
  ],
);

export const messageBatches = sqliteTable(
  "message_batches",
  {
    ...sessionRow(),
    total: integer("total").notNull(),
    createdAt: createdAt(),
  },
  (t) => [accountListIndex("message_batches_account_idx", t)],
);

export const contacts = sqliteTable(
  "contacts",
  {
    ...accountRow(),
    ...contactCard(),
    /** JSON array of strings */
    tags: jsonText("tags", "[]"),
    /** JSON object */
    attributes: jsonText("attributes", "{}"),
    optedOut: integer("opted_out", { mode: "boolean" }).notNull().default(false),
    /** JSON: the network's ids of the person beside the phone number ({userId, parentUserId, username}); null: none known. */
    identity: text("identity"),
    ...timestamps(),
  },
  (t) => [
    uniqueIndex("contacts_account_phone_idx").on(t.accountId, t.phone),
    accountListIndex("contacts_account_idx", t),
    // A message that names its sender only by BSUID finds the contact (and so the number) here.
    index("contacts_account_user_idx").on(t.accountId, sql`json_extract(${t.identity}, '$.userId')`),
  ],
);

/**
 * One row per conversation of a session, so listing chats never groups over `messages`. Kept by
 * the `messages_chat_activity` trigger (migrations) on every message insert, in the same statement
 * as the insert whoever writes it; `POST /api/chats/{chatId}/read` clears the unread part.
 */
export const chats = sqliteTable(
  "chats",
  {
    accountId: accountId(),
    sessionId: sessionId(),
    chatId: chatId(),
    lastMessageId: text("last_message_id").notNull(),
    lastMessageAt: integer("last_message_at").notNull(),
    /** The customer's last message: opens the 24-hour customer-service window. */
    lastInboundId: text("last_inbound_id"),
    lastInboundAt: integer("last_inbound_at"),
    /** Inbound messages since the chat was last marked read. */
    unreadCount: counter("unread_count"),
    /** The oldest of them (bounds the range marked read). */
    firstUnreadId: text("first_unread_id"),
    readAt: integer("read_at"),
  },
  (t) => [primaryKey({ columns: [t.sessionId, t.chatId] }), index("chats_activity_idx").on(t.accountId, t.sessionId, t.lastMessageAt, t.chatId)],
);

/**
 * Message templates of a session's network (WhatsApp: the business account's, synced from Meta; sandbox:
 * created here), cached per session: sends are checked against them. One row per name and language.
 */
export const messageTemplates = sqliteTable(
  "message_templates",
  {
    ...sessionRow(),
    name: text("name").notNull(),
    language: text("language").notNull(),
    /** The network's id of the template (Meta's hsm id). */
    externalId: text("external_id"),
    status: text("status").notNull(),
    category: text("category").notNull(),
    /** JSON: the components as the network defines them. */
    components: jsonText("components", "[]"),
    quality: text("quality"),
    rejectedReason: text("rejected_reason"),
    /** When the row was last brought in line with the network (a sync, a create, a webhook). */
    syncedAt: integer("synced_at").notNull(),
    ...timestamps(),
  },
  (t) => [uniqueIndex("message_templates_session_name_lang").on(t.sessionId, t.name, t.language), index("message_templates_account_idx").on(t.accountId, t.sessionId, t.name)],
);
