import { index, integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { accountId, accountListIndex, contactCard, counter, jsonText, sessionRow, timestamps } from "./columns.ts";

/**
 * Campaigns. Delivery stats are not stored: they are counted from the campaign's messages
 * (`messages.campaign_id`), so receipts keep them current after completion at no extra write.
 */
export const campaigns = sqliteTable(
  "campaigns",
  {
    ...sessionRow(),
    name: text("name").notNull(),
    status: text("status", { enum: ["draft", "scheduled", "running", "paused", "completed", "cancelled"] }).notNull(),
    /** Why the campaign is paused (e.g. the session left WORKING); null otherwise. */
    statusReason: text("status_reason"),
    /** JSON: {text} | {template} | {type, media: {url}, caption?, filename?} */
    message: text("message").notNull(),
    /** JSON: {contactIds?, tags?, all?} */
    audience: text("audience").notNull(),
    scheduledAt: integer("scheduled_at"),
    /** JSON {perMinute, jitterPct} or null (the session's own rate). */
    pacing: text("pacing"),
    /** Recipients resolved at start, and how many of them were skipped (opted out, duplicate, cancelled). */
    total: counter("total"),
    skipped: counter("skipped"),
    /** Guards the one resolution of the audience (written by the start that won). */
    startToken: text("start_token"),
    /** Last time recipient jobs were put on SEND_QUEUE (the cron re-kicks stalled campaigns). */
    kickedAt: integer("kicked_at"),
    completionEventId: text("completion_event_id"),
    startedAt: integer("started_at"),
    completedAt: integer("completed_at"),
    cancelledAt: integer("cancelled_at"),
    ...timestamps(),
  },
  (t) => [
    accountListIndex("campaigns_account_idx", t),
    index("campaigns_account_status_idx").on(t.accountId, t.status, t.id),
    index("campaigns_status_idx").on(t.status, t.scheduledAt),
    index("campaigns_session_idx").on(t.sessionId, t.status),
  ],
);

/**
 * One row per audience entry, numbered from 1 in send order. `status` is the recipient's own part
 * (pending -> queued with its message id, or skipped with a reason); once queued, the live state is
 * its message's.
 */
export const campaignRecipients = sqliteTable(
  "campaign_recipients",
  {
    campaignId: text("campaign_id").notNull(),
    seq: integer("seq").notNull(),
    accountId: accountId(),
    contactId: text("contact_id").notNull(),
    /** A snapshot of the contact taken at start. */
    ...contactCard(),
    attributes: jsonText("attributes", "{}"),
    status: text("status", { enum: ["pending", "queued", "skipped"] }).notNull(),
    /** Why skipped: opted_out, duplicate, cancelled. */
    reason: text("reason"),
    messageId: text("message_id"),
  },
  (t) => [primaryKey({ columns: [t.campaignId, t.seq] }), index("campaign_recipients_status_idx").on(t.campaignId, t.status, t.seq)],
);
