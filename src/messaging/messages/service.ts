import { and, eq } from "drizzle-orm";
import { getDb } from "../../db/client.ts";
import { messageBatches } from "../../db/schema/index.ts";
import { ApiError, errors } from "../../platform/errors.ts";
import { newId } from "../../platform/ids.ts";
import { decodeCursor, IdCursor, toPage } from "../../platform/pagination.ts";
import { checkTargetUrl } from "../../platform/safe-url.ts";
import { ACCEPTED_ADDRESS_FORMS, parseAddress } from "../chat-id.ts";
import { base64Size, MEDIA_LIMITS, type MediaType } from "../media/limits.ts";
import { putMedia } from "../media/store.ts";
import { loadSession, ownedSessionStub } from "../sessions/service.ts";
import type { SessionRow } from "../sessions/mapper.ts";
import type { Draft } from "../sessions/types.ts";
import { enqueueSendJobs } from "../queue/send-queue.ts";
import { toMessage, type StoredMedia } from "./mapper.ts";
import { batchStatusCounts, chatMessages, insertStatement, messageInChat, outboundRow } from "./store.ts";
import type { MessageStatus } from "../status.ts";
import { BulkItem, type MediaInput, type Message, type TemplateSpec } from "./schemas.ts";
import { chunk } from "../../platform/batching.ts";
import { config } from "../../platform/config.ts";

/** What can be sent: text, a template, or media (exactly one). */
export type MessageContent =
  | { text: string }
  | { template: TemplateSpec }
  | { type: MediaType; media: MediaInput; caption?: string; filename?: string };

export type SendInput = { sessionId: string; to: string; replyTo?: string } & MessageContent;

export interface SendOptions {
  campaignId?: string | null;
  batchId?: string | null;
  /** Origin of this API (for signed media URLs); defaults to none, which only link media needs. */
  origin?: string;
}

function ensureWorking(session: SessionRow): void {
  if (session.status !== "WORKING") {
    throw errors.sessionNotWorking(session.id, session.status);
  }
}

export const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** Validates the address and content of one message and stores uploaded media. Throws ApiError. */
async function buildDraft(env: Env, accountId: string, to: string, content: MessageContent, opts: SendOptions, prefix = ""): Promise<Draft> {
  const digits = parseAddress(to);
  if (!digits) throw errors.invalidRequest(`\`to\` must be ${ACCEPTED_ADDRESS_FORMS}.`, [{ path: `${prefix}to`, message: `must be ${ACCEPTED_ADDRESS_FORMS}` }]);
  const draft: Draft = { id: newId("msg"), to: digits, type: "text", campaignId: opts.campaignId ?? null, batchId: opts.batchId ?? null };
  if ("text" in content) return { ...draft, type: "text", text: content.text };
  if ("template" in content) return { ...draft, type: "template", template: content.template };
  const { type, media, caption, filename } = content;
  if (type === "audio" && caption) throw errors.invalidRequest("Audio messages cannot have a caption.", [{ path: `${prefix}caption`, message: "not allowed for audio" }]);
  const stored: StoredMedia = { url: null, mimetype: null, filename: filename ?? null, caption: caption ?? null, size: null, mediaId: null, origin: null };
  if ("url" in media) {
    const check = checkTargetUrl(media.url, { allowLoopback: config(env).allowLoopbackUrls });
    if (!check.ok) throw errors.invalidRequest(`media.url ${check.reason}.`, [{ path: `${prefix}media.url`, message: check.reason }]);
    stored.url = check.url.toString();
  } else {
    const limits = MEDIA_LIMITS[type];
    const mimetype = media.mimetype.toLowerCase().split(";")[0]!.trim();
    if (!limits.mimetypes.includes(mimetype)) {
      throw errors.invalidRequest(`${type} accepts ${limits.mimetypes.join(", ")}.`, [{ path: `${prefix}media.mimetype`, message: `not accepted for ${type}` }]);
    }
    const data = media.data.replace(/\s+/g, "");
    if (data.length % 4 !== 0 || !BASE64.test(data)) throw errors.invalidRequest("media.data must be base64.", [{ path: `${prefix}media.data`, message: "not base64" }]);
    const size = base64Size(data);
    if (size > limits.maxBytes) {
      throw new ApiError(413, "media_too_large", `${type} files are limited to ${limits.maxBytes} bytes; this one has ${size}.`, { limitBytes: limits.maxBytes, path: `${prefix}media.data` });
    }
    const put = await putMedia(env, accountId, data, mimetype, media.filename ?? filename);
    Object.assign(stored, { mimetype, size: put.size, mediaId: put.mediaId, origin: opts.origin ?? null, filename: media.filename ?? filename ?? null });
  }
  return { ...draft, type, media: stored };
}

async function resolveReplyTo(env: Env, accountId: string, sessionId: string, chatDigits: string, replyTo: string): Promise<{ replyTo: string; replyToExternalId: string | null }> {
  const row = await messageInChat(env, accountId, sessionId, chatDigits, replyTo);
  if (!row) throw errors.invalidRequest("replyTo must be the id of a message in this chat.", [{ path: "replyTo", message: "no such message in this chat" }]);
  return { replyTo: row.id, replyToExternalId: row.externalId };
}

/**
 * Sends one message now through the session's Durable Object and answers the stored record.
 * Reused by campaigns with `campaignId`.
 */
export async function sendMessage(env: Env, accountId: string, input: SendInput, opts: SendOptions = {}): Promise<Message> {
  const { sessionId, to, replyTo, ...content } = input;
  // Uploads are stored before the send: make sure the session is ours first, not to keep orphans.
  if ("media" in content && "data" in content.media) ensureWorking(await loadSession(env, accountId, sessionId));
  let draft = await buildDraft(env, accountId, to, content as MessageContent, opts);
  if (replyTo) draft = { ...draft, ...(await resolveReplyTo(env, accountId, sessionId, draft.to, replyTo)) };
  // The session's DO checks ownership and state itself; the lookup (cached per isolate) only keeps unknown ids from creating objects.
  const outcome = await (await ownedSessionStub(env, accountId, sessionId)).send(accountId, draft);
  if ("message" in outcome) return outcome.message as Message;
  if (outcome.code === "not_found") throw errors.notFound("session");
  throw errors.sessionNotWorking(sessionId, outcome.status);
}

export interface QueuedResult {
  batchId: string;
  accepted: number;
  messageIds: string[];
  rejected: { index: number; error: { code: string; message: string } }[];
}

/**
 * Validates each item, stores the valid ones as `pending` under one batch and queues them for the
 * session's Durable Object, which paces them. Invalid items are reported by index. Reused by
 * campaigns with `campaignId`.
 */
export async function queueMessages(env: Env, accountId: string, sessionId: string, items: unknown[], opts: SendOptions = {}): Promise<QueuedResult> {
  const session = await loadSession(env, accountId, sessionId);
  ensureWorking(session);
  const batchId = opts.batchId ?? newId("bat");
  const rejected: QueuedResult["rejected"] = [];
  const drafts: Draft[] = [];
  for (let index = 0; index < items.length; index++) {
    const parsed = BulkItem.safeParse(items[index]);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      rejected.push({ index, error: { code: "invalid_request", message: issue ? `${issue.path.join(".") || "item"}: ${issue.message}` : "invalid item" } });
      continue;
    }
    const { to, ...content } = parsed.data;
    try {
      drafts.push(await buildDraft(env, accountId, to, content as MessageContent, { ...opts, batchId }));
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      rejected.push({ index, error: { code: err.code, message: err.message } });
    }
  }
  const now = Date.now();
  const db = getDb(env.DB);
  const inserts = drafts.map((d) => insertStatement(env, outboundRow({ ...d, accountId, sessionId, replyTo: null, batchId, campaignId: opts.campaignId ?? null, createdAt: now }, { status: "pending" })));
  const batchRow = db.insert(messageBatches).values({ id: batchId, accountId, sessionId, total: drafts.length, createdAt: now }).onConflictDoNothing();
  for (const [i, part] of chunk(inserts, 500).entries()) {
    await db.batch(i === 0 ? [batchRow, ...part] : (part as [typeof part[0], ...typeof part]));
  }
  if (inserts.length === 0) await batchRow;
  const messageIds = drafts.map((d) => d.id);
  await enqueueSendJobs(
    env,
    chunk(messageIds, 100).map((ids) => ({ kind: "bulk", accountId, sessionId, messageIds: ids })),
  );
  return { batchId, accepted: drafts.length, messageIds, rejected };
}

/** `POST /api/messages/bulk`: the queued result without the message ids. */
export async function sendBulk(env: Env, accountId: string, body: { sessionId: string; messages: unknown[] }, opts: SendOptions): Promise<Omit<QueuedResult, "messageIds">> {
  const { batchId, accepted, rejected } = await queueMessages(env, accountId, body.sessionId, body.messages, opts);
  return { batchId, accepted, rejected };
}

export async function getBatch(env: Env, accountId: string, batchId: string) {
  const db = getDb(env.DB);
  const batch = await db.select().from(messageBatches).where(and(eq(messageBatches.accountId, accountId), eq(messageBatches.id, batchId))).get();
  if (!batch) throw errors.notFound("batch");
  const counts = await batchStatusCounts(env, accountId, batchId);
  const by = (s: MessageStatus) => counts.get(s) ?? 0;
  const pending = by("pending");
  return {
    id: batch.id,
    sessionId: batch.sessionId,
    total: batch.total,
    pending,
    sent: by("sent"),
    delivered: by("delivered"),
    read: by("read"),
    failed: by("failed"),
    done: pending === 0,
    createdAt: new Date(batch.createdAt).toISOString(),
  };
}

export async function chatHistory(env: Env, accountId: string, chatId: string, q: { sessionId?: string; limit: number; cursor?: string }) {
  const digits = parseAddress(chatId);
  if (!digits) throw errors.invalidRequest(`The chat id must be ${ACCEPTED_ADDRESS_FORMS}.`, [{ path: "chatId", message: "not a valid chat id" }]);
  if (q.sessionId) await loadSession(env, accountId, q.sessionId);
  const cursor = decodeCursor(q.cursor, IdCursor);
  const rows = await chatMessages(env, accountId, digits, { sessionId: q.sessionId, beforeId: cursor?.id, limit: q.limit + 1 });
  const page = toPage(rows, q.limit, (r) => ({ id: r.id }));
  return { data: page.data.map(toMessage), nextCursor: page.nextCursor };
}
