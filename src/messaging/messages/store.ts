import { and, count, desc, eq, gt, gte, inArray, isNull, lt, lte, or, sql } from "drizzle-orm";
import { getDb } from "../../db/client.ts";
import { messages } from "../../db/schema/index.ts";
import { enqueueEvents, prepareEventAfterChange, prepareEvents, type EmitInput } from "../../events/emit.ts";
import { chatIdOf } from "../chat-id.ts";
import { needsFetch } from "../media/limits.ts";
import type { FailureReason, InboundFromNetwork, InboundMedia } from "../networks/driver.ts";
import type { Content } from "./content.ts";
import type { MessageStatus } from "../status.ts";
import { toMessage, type MessageRow, type StoredMedia } from "./mapper.ts";
import type { TemplateSpec } from "./schemas.ts";
import { chunk } from "../../platform/batching.ts";
import { itemsPerStatement } from "../../platform/d1.ts";
import { oldestExpired } from "../../platform/retention.ts";

/**
 * The one reader and writer of `messages` rows: every module reaches them through these functions
 * (a test in test/unit/architecture.node.test.ts keeps it so). Rows are built here from typed
 * inputs; functions named `...Statement(s)` answer statements for the caller's own D1 batch.
 */
export type { MessageRow } from "./mapper.ts";

/** Ids per `IN (...)` list, with room for the statement's own parameters. */
export const ID_CHUNK = itemsPerStatement(1, 20);

const FROM: Record<"sent" | "delivered" | "read" | "failed", MessageStatus[]> = {
  sent: ["pending"],
  delivered: ["pending", "sent"],
  read: ["pending", "sent", "delivered"],
  failed: ["pending", "sent"],
};

const EVENT = { sent: "message.sent", delivered: "message.delivered", read: "message.read" } as const;

export type Target = "sent" | "delivered" | "read" | "failed";
export type Selector = { ids: string[] } | { externalIds: string[] };

/**
 * Moves messages of one session forward to `target` and emits one event per step actually taken.
 * Each step is one conditional UPDATE (status in the allowed prior states), so concurrent or
 * out-of-order receipts can never move a message backwards, and a step already taken is a no-op
 * (replayed receipts emit nothing). A jump (read before delivered) passes through the skipped steps.
 */
export async function advanceStatus(
  env: Env,
  accountId: string,
  sessionId: string,
  selector: Selector,
  target: Target,
  at: number,
  error?: FailureReason,
  opts: {
    afterSent?: boolean;
    /** Takes the recorded events' ids to put on the queue (the Session DO coalesces them); default: enqueue now. */
    enqueue?: (eventIds: string[]) => void;
  } = {},
): Promise<MessageRow[]> {
  const db = getDb(env.DB);
  let steps: Target[] = target === "failed" ? ["failed"] : (["sent", "delivered", "read"] as const).slice(0, ["sent", "delivered", "read"].indexOf(target) + 1);
  // Receipts of messages known to be sent skip the (no-op) sent step: one statement fewer.
  if (opts.afterSent) steps = steps.filter((s) => s !== "sent");
  const keys = "ids" in selector ? selector.ids : selector.externalIds;
  const column = "ids" in selector ? messages.id : messages.externalId;
  const changed: MessageRow[] = [];
  const events: EmitInput[] = [];
  for (const part of chunk(keys, ID_CHUNK)) {
    for (const step of steps) {
      const set: Record<string, unknown> = { status: step };
      if (step === "sent") set.sentAt = sql`coalesce(${messages.sentAt}, ${at})`;
      if (step === "delivered") set.deliveredAt = sql`coalesce(${messages.deliveredAt}, ${at})`;
      if (step === "read") set.readAt = sql`coalesce(${messages.readAt}, ${at})`;
      if (step === "failed") {
        set.errorCode = error?.code ?? "failed";
        set.errorMessage = error?.message ?? "The network could not send the message.";
      }
      const rows = await db
        .update(messages)
        .set(set as Partial<MessageRow>)
        .where(and(eq(messages.sessionId, sessionId), inArray(column, part), inArray(messages.status, FROM[step])))
        .returning();
      for (const row of rows) {
        if (step !== "failed") events.push({ type: EVENT[step], accountId, sessionId, data: toMessage(row) });
        if (step === target) changed.push(row);
      }
    }
  }
  const prepared = prepareEvents(env, events);
  if (prepared.statements.length > 0) await db.batch(prepared.statements as [(typeof prepared.statements)[number], ...(typeof prepared.statements)[number][]]);
  if (opts.enqueue) opts.enqueue(prepared.events.map((e) => e.id));
  else await prepared.enqueue();
  return changed;
}

// ---- rows ---------------------------------------------------------------------------------------

/** An outbound message as its sender knows it (`to`: the recipient's digits). */
export interface NewOutbound {
  id: string;
  accountId: string;
  sessionId: string;
  to: string;
  type: MessageRow["type"];
  text?: string | null;
  template?: TemplateSpec | null;
  media?: StoredMedia | null;
  content?: Content | null;
  replyTo?: string | null;
  batchId?: string | null;
  campaignId?: string | null;
  createdAt: number;
}

/** Where an outbound row starts: `pending` (queued or sending over I/O), or its final send state. */
export type OutboundState = { status: "pending" } | { status: "sent"; sentAt: number } | { status: "failed"; error: FailureReason };

export function outboundRow(m: NewOutbound, state: OutboundState): MessageRow {
  return {
    id: m.id,
    accountId: m.accountId,
    sessionId: m.sessionId,
    chatId: chatIdOf(m.to),
    direction: "outbound",
    type: m.type,
    text: m.text ?? null,
    template: m.template ? JSON.stringify(m.template) : null,
    media: m.media ? JSON.stringify(m.media) : null,
    content: m.content ? JSON.stringify(m.content) : null,
    reactions: null,
    status: state.status,
    errorCode: state.status === "failed" ? state.error.code : null,
    errorMessage: state.status === "failed" ? state.error.message : null,
    externalId: null,
    replyTo: m.replyTo ?? null,
    batchId: m.batchId ?? null,
    campaignId: m.campaignId ?? null,
    createdAt: m.createdAt,
    sentAt: state.status === "sent" ? state.sentAt : null,
    deliveredAt: null,
    readAt: null,
  };
}

/** The media column of an inbound file: `pending` until fetched, `stored` when already in R2. */
function inboundMedia(m: InboundMedia): StoredMedia {
  const status = m.mediaId ? "stored" : needsFetch(m) ? "pending" : "failed";
  return { url: null, size: null, mediaId: null, origin: null, ...m, status, ...(status === "failed" ? { reason: "The network named no file." } : {}) };
}

/**
 * An inbound message as received from its network. `refs`: our ids of the messages its network
 * ids name (see `referencedIds`), for its reply context and a reaction's target.
 */
export function inboundRow(id: string, accountId: string, sessionId: string, m: InboundFromNetwork, refs: Map<string, string> = new Map()): MessageRow {
  let content = m.content;
  if (content?.reaction && m.reactionToExternalId) content = { ...content, reaction: { ...content.reaction, messageId: refs.get(m.reactionToExternalId) ?? null } };
  return {
    id,
    accountId,
    sessionId,
    chatId: chatIdOf(m.from),
    direction: "inbound",
    type: m.type,
    text: m.text ?? null,
    template: m.template ? JSON.stringify(m.template) : null,
    media: m.media ? JSON.stringify(inboundMedia(m.media)) : null,
    content: content ? JSON.stringify(content) : null,
    reactions: null,
    status: "received",
    errorCode: null,
    errorMessage: null,
    externalId: m.externalId,
    replyTo: (m.contextExternalId && refs.get(m.contextExternalId)) || null,
    batchId: null,
    campaignId: null,
    createdAt: m.timestamp,
    sentAt: null,
    deliveredAt: null,
    readAt: null,
  };
}

/**
 * Our ids of the messages of this chat that the network's ids name (a reply's context, a reaction's
 * target). The sandbox network names messages by our own ids, so those match too.
 */
export async function referencedIds(env: Env, sessionId: string, chatId: string, externalIds: (string | null | undefined)[]): Promise<Map<string, string>> {
  const wanted = [...new Set(externalIds.filter((x): x is string => !!x))];
  if (wanted.length === 0) return new Map();
  const rows = await getDb(env.DB)
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
 * Settles the file of an inbound message whose media is still `pending`: `stored`, or `failed` for
 * good. The change and its event (`message.media_stored` / `message.media_failed`, the message as
 * `data`) are written in one batch, and the event only if the row was still pending, so a retried
 * fetch (the queue's backstop after the Durable Object's own attempt) never overwrites a settled
 * file nor announces it twice. Answers whether this call settled it.
 */
export async function settlePendingMedia(env: Env, row: MessageRow, media: StoredMedia): Promise<boolean> {
  const db = getDb(env.DB);
  const settled = JSON.stringify(media);
  const update = db
    .update(messages)
    .set({ media: settled })
    .where(and(eq(messages.id, row.id), eq(messages.accountId, row.accountId), sql`json_extract(${messages.media}, '$.status') = 'pending'`));
  const type = media.status === "stored" ? "message.media_stored" : "message.media_failed";
  const announce = prepareEventAfterChange(env, { type, accountId: row.accountId, sessionId: row.sessionId, data: toMessage({ ...row, media: settled }) });
  const [changed] = await db.batch([update, announce.statement]);
  if (changed.meta.changes !== 1) return false;
  await enqueueEvents(env, [announce.event.id]);
  return true;
}

/** The condition of the partial index `messages_pending_media_idx` (written the same, so it is used). */
const MEDIA_PENDING = "json_extract(media, '$.status') = 'pending'";

/**
 * Inbound messages whose file is still `pending`, received before `before` and not swept since
 * `before`, oldest first: at most `limit` (for the cron's sweep).
 */
export async function stalePendingMedia(env: Env, before: number, limit: number): Promise<MessageRow[]> {
  const res = await env.DB.prepare(
    `SELECT id FROM messages WHERE ${MEDIA_PENDING} AND created_at < ?1 AND coalesce(json_extract(media, '$.sweptAt'), 0) < ?1 ORDER BY created_at LIMIT ?2`,
  )
    .bind(before, limit)
    .all<{ id: string }>();
  if (res.results.length === 0) return [];
  return getDb(env.DB).select().from(messages).where(inArray(messages.id, res.results.map((r) => r.id))).all();
}

/** Counts one more sweep (at `now`) on the files of these messages still pending; answers those. */
export async function markMediaSwept(env: Env, ids: string[], now: number): Promise<{ id: string; sessionId: string }[]> {
  const out: { id: string; sessionId: string }[] = [];
  for (const part of chunk(ids, ID_CHUNK)) {
    const res = await env.DB.prepare(
      `UPDATE messages SET media = json_set(media, '$.sweeps', coalesce(json_extract(media, '$.sweeps'), 0) + 1, '$.sweptAt', ?1)
        WHERE id IN (${part.map((_, i) => `?${i + 2}`).join(", ")}) AND ${MEDIA_PENDING} RETURNING id, session_id`,
    )
      .bind(now, ...part)
      .all<{ id: string; session_id: string }>();
    out.push(...res.results.map((r) => ({ id: r.id, sessionId: r.session_id })));
  }
  return out;
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

/** Messages of an account by id (for the caller's batch). */
export function messagesByIdsQuery(env: Env, accountId: string, ids: string[]) {
  return getDb(env.DB).select().from(messages).where(and(eq(messages.accountId, accountId), inArray(messages.id, ids)));
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

// ---- reads --------------------------------------------------------------------------------------

export async function messageById(env: Env, id: string): Promise<MessageRow | undefined> {
  return getDb(env.DB).select().from(messages).where(eq(messages.id, id)).get();
}

/** The rows among `ids` of this session still `pending`. */
export async function pendingOfSession(env: Env, sessionId: string, ids: string[]): Promise<MessageRow[]> {
  return getDb(env.DB)
    .select()
    .from(messages)
    .where(and(eq(messages.sessionId, sessionId), inArray(messages.id, ids), eq(messages.status, "pending")))
    .all();
}

/** A message of one chat of one session (for replies), or undefined. */
export async function messageInChat(env: Env, accountId: string, sessionId: string, chatDigits: string, id: string): Promise<{ id: string; externalId: string | null } | undefined> {
  return getDb(env.DB)
    .select({ id: messages.id, externalId: messages.externalId })
    .from(messages)
    .where(and(eq(messages.accountId, accountId), eq(messages.sessionId, sessionId), eq(messages.chatId, chatIdOf(chatDigits)), eq(messages.id, id)))
    .get();
}

/** A chat's messages, newest first: at most `limit` rows with ids below `beforeId`. */
export async function chatMessages(env: Env, accountId: string, chatDigits: string, q: { sessionId?: string; beforeId?: string; limit: number }): Promise<MessageRow[]> {
  return getDb(env.DB)
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
export async function batchStatusCounts(env: Env, accountId: string, batchId: string): Promise<Map<MessageStatus, number>> {
  const rows = await getDb(env.DB)
    .select({ status: messages.status, n: count() })
    .from(messages)
    .where(and(eq(messages.batchId, batchId), eq(messages.accountId, accountId)))
    .groupBy(messages.status)
    .all();
  return new Map(rows.map((r) => [r.status, r.n]));
}

/** This session's messages sent or delivered at or before `cutoff`, in id order after `afterId` (at most `limit`). */
export async function unreadSentBefore(env: Env, sessionId: string, cutoff: number, limit: number, afterId = ""): Promise<{ id: string; chatId: string }[]> {
  return getDb(env.DB)
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
export async function unreadInboundOfChat(env: Env, accountId: string, sessionId: string, chatId: string, upTo: number, afterId: string, limit: number): Promise<{ id: string; externalId: string | null }[]> {
  return getDb(env.DB)
    .select({ id: messages.id, externalId: messages.externalId })
    .from(messages)
    .where(and(eq(messages.accountId, accountId), eq(messages.sessionId, sessionId), eq(messages.chatId, chatId), gt(messages.id, afterId), eq(messages.direction, "inbound"), isNull(messages.readAt), lte(messages.createdAt, upTo)))
    .orderBy(messages.id)
    .limit(limit)
    .all();
}

/** A session's message by its network id. */
export async function messageByExternalId(env: Env, sessionId: string, externalId: string): Promise<MessageRow | undefined> {
  return getDb(env.DB).select().from(messages).where(and(eq(messages.sessionId, sessionId), eq(messages.externalId, externalId))).get();
}

// ---- retention ----------------------------------------------------------------------------------

/** Ids per DELETE, with room for the statement's own parameters. */
const IDS_PER_DELETE = itemsPerStatement(1, 10);

/** The oldest messages created before `before` and no longer pending, with the upload each refers to. */
export async function oldestSettled(env: Env, before: number): Promise<{ id: string; media_id: string | null }[]> {
  return oldestExpired<{ id: string; media_id: string | null }>(
    env.DB,
    { table: "messages", prefix: "msg", before, where: "status <> 'pending'" },
    "id, json_extract(media, '$.mediaId') AS media_id",
  );
}

export async function deleteMessages(env: Env, ids: string[]): Promise<void> {
  for (const part of chunk(ids, IDS_PER_DELETE)) {
    await env.DB.prepare(`DELETE FROM messages WHERE id IN (${part.map(() => "?").join(", ")})`)
      .bind(...part)
      .run();
  }
}

// ---- campaigns' messages (set-based: one statement per range, never one per recipient) -------

/** What every message of one campaign claim shares; ids are `idBase` plus the recipient's seq in `seqDigits` digits. */
export interface CampaignClaim {
  idBase: string;
  seqDigits: number;
  accountId: string;
  sessionId: string;
  campaignId: string;
  type: MessageRow["type"];
  template: TemplateSpec | null;
  /** The same typed body for every recipient (location, contacts, interactive). */
  content: Content | null;
  createdAt: number;
}

/** Rows per INSERT: 3 parameters each beside the statement's 8 shared ones. */
const ROWS_PER_CLAIM_INSERT = itemsPerStatement(3, 8);

/**
 * INSERTs of one campaign claim (for the caller's transaction): a `pending` message per listed
 * recipient, each only while its `campaign_recipients` row is still `pending`, addressed to its phone.
 */
export function claimCampaignMessagesStatements(env: Env, c: CampaignClaim, rows: { seq: number; text: string | null; media: StoredMedia | null }[]): D1PreparedStatement[] {
  const idExpr = `?1 || printf('%0${c.seqDigits}d', v.column1)`;
  const statements: D1PreparedStatement[] = [];
  for (let i = 0; i < rows.length; i += ROWS_PER_CLAIM_INSERT) {
    const part = rows.slice(i, i + ROWS_PER_CLAIM_INSERT);
    const params: unknown[] = [c.idBase, c.accountId, c.sessionId, c.type, c.template ? JSON.stringify(c.template) : null, c.campaignId, c.createdAt, c.content ? JSON.stringify(c.content) : null];
    const values = part.map((r) => {
      const n = params.push(r.seq, r.text, r.media ? JSON.stringify(r.media) : null);
      return `(?${n - 2}, ?${n - 1}, ?${n})`;
    });
    statements.push(
      env.DB.prepare(
        `INSERT INTO messages (id, account_id, session_id, chat_id, direction, type, text, template, media, content, status, campaign_id, created_at)
         SELECT ${idExpr}, ?2, ?3, substr(r.phone, 2) || '@c.us', 'outbound', ?4, v.column2, ?5, v.column3, ?8, 'pending', ?6, ?7
           FROM (VALUES ${values.join(", ")}) v
           JOIN campaign_recipients r ON r.campaign_id = ?6 AND r.seq = v.column1 AND r.status = 'pending'`,
      ).bind(...params),
    );
  }
  return statements;
}

/** Message ids of the `queued` recipients in [from, to] whose message is still `pending`, in seq order. */
export async function queuedCampaignMessageIds(env: Env, campaignId: string, from: number, to: number): Promise<string[]> {
  const res = await env.DB.prepare(
    `SELECT r.message_id AS id FROM campaign_recipients r JOIN messages m ON m.id = r.message_id
      WHERE r.campaign_id = ? AND r.seq BETWEEN ? AND ? AND r.status = 'queued' AND m.status = 'pending' ORDER BY r.seq`,
  )
    .bind(campaignId, from, to)
    .all<{ id: string }>();
  return res.results.map((r) => r.id);
}

/**
 * Blocks of `blockSize` recipients that still have some to send: not yet claimed, or (unless
 * `unclaimedOnly`) claimed with the message unsent.
 */
export async function campaignBlocksToSend(env: Env, campaignId: string, blockSize: number, unclaimedOnly: boolean): Promise<number[]> {
  const res = await env.DB.prepare(
    `SELECT DISTINCT (r.seq - 1) / ?2 AS b FROM campaign_recipients r LEFT JOIN messages m ON m.id = r.message_id
      WHERE r.campaign_id = ?1 AND (r.status = 'pending' ${unclaimedOnly ? "" : "OR (r.status = 'queued' AND m.status = 'pending')"}) ORDER BY b`,
  )
    .bind(campaignId, blockSize)
    .all<{ b: number }>();
  return res.results.map((r) => r.b);
}

export type FinalCounts = Record<"sent" | "delivered" | "read" | "failed", number>;

/** Per campaign, how many of its messages are past `pending` in each status (index on campaign_id, status). */
export async function campaignStatusCounts(env: Env, campaignIds: string[]): Promise<Map<string, FinalCounts>> {
  const counts = new Map<string, FinalCounts>();
  for (const part of chunk(campaignIds, ID_CHUNK)) {
    const res = await env.DB.prepare(
      `SELECT campaign_id AS id, status, count(*) AS n FROM messages WHERE campaign_id IN (${part.map(() => "?").join(",")}) AND status IN ('sent','delivered','read','failed') GROUP BY campaign_id, status`,
    )
      .bind(...part)
      .all<{ id: string; status: keyof FinalCounts; n: number }>();
    for (const r of res.results) {
      const c = counts.get(r.id) ?? { sent: 0, delivered: 0, read: 0, failed: 0 };
      c[r.status] = r.n;
      counts.set(r.id, c);
    }
  }
  return counts;
}

/**
 * SQL conditions over `messages` for campaigns' own conditional statements, which must decide in
 * the same statement (a separate read would race the claims): the campaign bound at `param` has a
 * pending message; the message with id `column` exists.
 */
export const messagesSql = {
  campaignHasPending: (param: string) => `EXISTS (SELECT 1 FROM messages WHERE campaign_id = ${param} AND status = 'pending')`,
  exists: (column: string) => `EXISTS (SELECT 1 FROM messages m WHERE m.id = ${column})`,
};

/** Deletes the campaign's pending messages except `keep` (at most ID_CHUNK ids; for the caller's transaction). */
export function deletePendingOfCampaignStatement(env: Env, campaignId: string, accountId: string, keep: string[]): D1PreparedStatement {
  const notIn = keep.length ? `AND id NOT IN (${keep.map((_, i) => `?${i + 3}`).join(",")})` : "";
  return env.DB.prepare(`DELETE FROM messages WHERE campaign_id = ?1 AND account_id = ?2 AND status = 'pending' ${notIn}`).bind(campaignId, accountId, ...keep);
}

/** A campaign's recipients with their message's live state. */
export interface RecipientWithMessage {
  seq: number;
  contact_id: string;
  phone: string;
  name: string | null;
  reason: string | null;
  message_id: string | null;
  live: "pending" | "sent" | "delivered" | "read" | "failed" | "skipped";
  error_code: string | null;
  error_message: string | null;
  sent_at: number | null;
  delivered_at: number | null;
  read_at: number | null;
}

const RECIPIENT_STATUS_SQL = "CASE WHEN r.status = 'skipped' THEN 'skipped' WHEN m.status IS NULL OR m.status = 'pending' THEN 'pending' ELSE m.status END";

/** One page of a campaign's recipients (seq after `afterSeq`), optionally only those in one live status. */
export async function recipientsWithMessages(env: Env, accountId: string, campaignId: string, q: { afterSeq: number; limit: number; status?: RecipientWithMessage["live"] }): Promise<RecipientWithMessage[]> {
  const res = await env.DB.prepare(
    `SELECT r.seq, r.contact_id, r.phone, r.name, r.reason, r.message_id, ${RECIPIENT_STATUS_SQL} AS live,
            m.error_code, m.error_message, m.sent_at, m.delivered_at, m.read_at
       FROM campaign_recipients r LEFT JOIN messages m ON m.id = r.message_id
      WHERE r.campaign_id = ?1 AND r.account_id = ?2 AND r.seq > ?3 ${q.status ? `AND ${RECIPIENT_STATUS_SQL} = ?5` : ""}
      ORDER BY r.seq LIMIT ?4`,
  )
    .bind(campaignId, accountId, q.afterSeq, q.limit, ...(q.status ? [q.status] : []))
    .all<RecipientWithMessage>();
  return res.results;
}
