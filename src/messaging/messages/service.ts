import { and, eq } from "drizzle-orm";
import { messageBatches } from "../../db/schema/index.ts";
import { ApiError, errors } from "../../platform/errors.ts";
import { newId } from "../../platform/ids.ts";
import { decodeCursor, IdCursor, toPage } from "../../platform/pagination.ts";
import { checkTargetUrl } from "../../platform/safe-url.ts";
import { ACCEPTED_ADDRESS_FORMS, ACCEPTED_CHAT_FORMS, USER_CHAT_DOMAIN, isUserAddress, parseChatAddress } from "../chat-id.ts";
import { phonesByUserIds } from "../contacts/service.ts";
import { base64Size, MEDIA_LIMITS, type MediaType } from "../media/limits.ts";
import { signedMediaUrl } from "../media/store.ts";
import { storeUpload } from "../media/upload.ts";
import { commitSessionWrites, loadSession, ownedSessionStub } from "../sessions/service.ts";
import type { SessionRow } from "../sessions/mapper.ts";
import type { Draft, QueueOutcome } from "../sessions/types.ts";
import { toMessage, type StoredMedia } from "./mapper.ts";
import type { ContactCard, InteractiveSend, Location } from "./content.ts";
import { batchStatusCounts, chatMessages, messageById, messageInChat } from "../store/reads.ts";
import { reactionStatement } from "../store/writes.ts";
import type { MessageStatus } from "../status.ts";
import { BulkItem, type MediaInput, type Message, type TemplateSpec } from "./schemas.ts";
import { templateChecker } from "../templates/service.ts";
import { config } from "../../platform/config.ts";
import { accountShard, type Shard } from "../../platform/shards.ts";
import { log } from "../../platform/log.ts";

/** What can be sent: text, a template, a location, contact cards, an interactive message, or media (exactly one). */
export type MessageContent =
  | { text: string }
  | { template: TemplateSpec }
  | { location: Location }
  | { contacts: ContactCard[] }
  | { interactive: InteractiveSend }
  | { type: MediaType; media: MediaInput; caption?: string; filename?: string };

/** A reaction names a message of the chat: resolved by `sendMessage` (not in bulk). */
export type SendInput = { sessionId: string; to: string; replyTo?: string } & (MessageContent | { reaction: { messageId: string; emoji: string } });

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

export { BASE64 } from "../media/upload.ts";

/** Validates the address and content of one message and stores uploaded media. Throws ApiError. */
async function buildDraft(env: Env, accountId: string, to: string, content: MessageContent, opts: SendOptions, prefix = ""): Promise<Draft> {
  const digits = addressOf(to);
  if (!digits) throw errors.invalidRequest(`\`to\` must be ${ACCEPTED_ADDRESS_FORMS}.`, [{ path: `${prefix}to`, message: `must be ${ACCEPTED_ADDRESS_FORMS}` }]);
  const draft: Draft = { id: newId("msg"), to: digits, type: "text", campaignId: opts.campaignId ?? null, batchId: opts.batchId ?? null };
  if ("text" in content) return { ...draft, type: "text", text: content.text };
  if ("template" in content) return { ...draft, type: "template", template: content.template };
  if ("location" in content) return { ...draft, type: "location", content: { location: content.location } };
  if ("contacts" in content) return { ...draft, type: "contacts", content: { contacts: content.contacts } };
  if ("interactive" in content) return { ...draft, type: "interactive", content: { interactive: content.interactive } };
  const { type, media, caption, filename } = content;
  if ((type === "audio" || type === "sticker") && caption) throw errors.invalidRequest(`${type === "audio" ? "Audio messages" : "Stickers"} cannot have a caption.`, [{ path: `${prefix}caption`, message: `not allowed for ${type}` }]);
  const stored: StoredMedia = { url: null, mimetype: null, filename: filename ?? null, caption: caption ?? null, size: null, mediaId: null, origin: null };
  if ("url" in media) {
    const check = checkTargetUrl(media.url, { allowLoopback: config(env).allowLoopbackUrls });
    if (!check.ok) throw errors.invalidRequest(`media.url ${check.reason}.`, [{ path: `${prefix}media.url`, message: check.reason }]);
    stored.url = check.url.toString();
  } else {
    Object.assign(stored, await storeUpload(env, accountId, type, media, filename, prefix), { origin: opts.origin ?? null });
  }
  return { ...draft, type, media: stored };
}

async function resolveReplyTo(env: Env, accountId: string, sessionId: string, chatDigits: string, replyTo: string, path = "replyTo"): Promise<{ replyTo: string; replyToExternalId: string | null }> {
  // The message replied or reacted to may have been sent a moment ago: the session commits it first (read your writes).
  await (await ownedSessionStub(env, accountId, sessionId)).flushWrites();
  const row = await messageInChat(await accountShard(env, accountId), accountId, sessionId, chatDigits, replyTo);
  if (!row) throw errors.invalidRequest(`${path} must be the id of a message in this chat.`, [{ path, message: "no such message in this chat" }]);
  return { replyTo: row.id, replyToExternalId: row.externalId };
}

/** A resolved recipient (`recipientOf`): a number's digits, or the BSUID of a person known only by it. */
function addressOf(to: string): string | null {
  const value = to.trim();
  return isUserAddress(value) ? value : parseChatAddress(value);
}

/** The BSUID a `to` names (bare, or as its chat id `<BSUID>@bsuid`), if it names one. */
function userIdOf(to: string): string | null {
  const value = to.trim();
  const user = value.endsWith(`@${USER_CHAT_DOMAIN}`) ? value.slice(0, -USER_CHAT_DOMAIN.length - 1) : value;
  return isUserAddress(user) ? user : null;
}

/**
 * A BSUID names the account's contact that has it: the message goes to their number (the chat is the
 * number's), or, for a person known only by BSUID, to the BSUID (their chat `<BSUID>@bsuid`). A BSUID
 * no contact of the account has is a 400 naming it (at most 10). Other addresses are checked where used.
 */
async function recipientsOf(env: Env, accountId: string, tos: { to: string; path: string }[]): Promise<Map<string, string>> {
  const users = [...new Set(tos.flatMap((t) => userIdOf(t.to) ?? []))];
  if (users.length === 0) return new Map();
  const found = await phonesByUserIds(await accountShard(env, accountId), accountId, users);
  const unknown = tos.filter((t) => { const u = userIdOf(t.to); return u !== null && !found.has(u); });
  if (unknown.length > 0) {
    const named = [...new Set(unknown.map((t) => userIdOf(t.to)!))].slice(0, 10);
    throw errors.invalidRequest(`\`to\` names ${named.length === 1 ? "a BSUID" : "BSUIDs"} no contact of this account has: ${named.join(", ")}.`, unknown.slice(0, 10).map((t) => ({ path: t.path, message: `unknown BSUID ${userIdOf(t.to)}` })));
  }
  return new Map(tos.flatMap((t) => { const u = userIdOf(t.to); return u ? [[t.to, found.get(u)!] as [string, string]] : []; }));
}

async function recipientOf(env: Env, accountId: string, to: string): Promise<string> {
  return (await recipientsOf(env, accountId, [{ to, path: "to" }])).get(to) ?? to;
}

/**
 * Sends one message now through the session's Durable Object and answers the stored record.
 * Reused by campaigns with `campaignId`.
 */
export async function sendMessage(env: Env, accountId: string, input: SendInput, opts: SendOptions = {}): Promise<Message> {
  const { sessionId, replyTo, ...content } = input;
  const to = await recipientOf(env, accountId, input.to);
  // Uploads are stored before the send: make sure the session is ours first, not to keep orphans.
  if ("media" in content && "data" in content.media) ensureWorking(await loadSession(env, accountId, sessionId));
  let draft: Draft;
  if ("reaction" in content) {
    const digits = addressOf(to);
    if (!digits) throw errors.invalidRequest(`\`to\` must be ${ACCEPTED_ADDRESS_FORMS}.`, [{ path: "to", message: `must be ${ACCEPTED_ADDRESS_FORMS}` }]);
    const target = await resolveReplyTo(env, accountId, sessionId, digits, content.reaction.messageId, "reaction.messageId");
    draft = { id: newId("msg"), to: digits, type: "reaction", content: { reaction: { messageId: target.replyTo, emoji: content.reaction.emoji } }, reactionToExternalId: target.replyToExternalId };
  } else {
    // A template send must fit the session's synced template before anything is stored or sent.
    if ("template" in content) await templateChecker(env, accountId, sessionId)(content.template);
    draft = await buildDraft(env, accountId, to, content as MessageContent, opts);
  }
  if (replyTo) draft = { ...draft, ...(await resolveReplyTo(env, accountId, sessionId, draft.to, replyTo)) };
  // The session's DO checks ownership and state itself; the lookup (cached per isolate) only keeps unknown ids from creating objects.
  const outcome = await (await ownedSessionStub(env, accountId, sessionId)).send(accountId, draft);
  if ("message" in outcome) {
    const reaction = draft.content?.reaction;
    // The session's own reaction shows on the message it reacts to once the network took it.
    if (reaction?.messageId && (outcome.message as Message).status !== "failed") {
      // The reaction's own row, which the statement checks for, is in the session's buffer until committed.
      await commitSessionWrites(env, accountId, sessionId);
      await reactionStatement(await accountShard(env, accountId), reaction.messageId, "me", reaction.emoji, draft.id);
    }
    return outcome.message as Message;
  }
  if (outcome.code === "not_found") throw errors.notFound("session");
  if (outcome.code === "reengagement_window_closed") throw errors.conflict(outcome.code, outcome.reason);
  if (outcome.code === "pair_rate_limited") throw errors.pairRateLimited(Math.max(1, Math.ceil(outcome.retryAfterMs / 1000)));
  if (outcome.code === "busy") throw errors.unavailable("The session has too many changes waiting to be stored; try again shortly.", 5);
  throw errors.sessionNotWorking(sessionId, outcome.status);
}

export interface QueuedResult {
  batchId: string;
  accepted: number;
  messageIds: string[];
  rejected: { index: number; error: { code: string; message: string } }[];
}

/**
 * A bulk send: validates each item and hands the valid ones, under one batch, to the session's
 * Durable Object, which keeps them `pending` and paces them. Invalid items are reported by index.
 * (Campaigns queue their recipients' messages themselves.)
 */
export async function queueMessages(env: Env, accountId: string, sessionId: string, items: unknown[], opts: SendOptions = {}): Promise<QueuedResult> {
  const session = await loadSession(env, accountId, sessionId);
  ensureWorking(session);
  const batchId = opts.batchId ?? newId("bat");
  const rejected: QueuedResult["rejected"] = [];
  const drafts: Draft[] = [];
  const checkTemplate = templateChecker(env, accountId, sessionId);
  // Every BSUID of the request in one look-up: one no contact has fails the whole request, naming it.
  const tos = items.flatMap((item, index) => {
    const to = item && typeof item === "object" ? (item as { to?: unknown }).to : undefined;
    return typeof to === "string" && to.length <= 160 ? [{ to, path: `messages.${index}.to` }] : [];
  });
  const resolved = await recipientsOf(env, accountId, tos);
  for (let index = 0; index < items.length; index++) {
    const parsed = BulkItem.safeParse(items[index]);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      rejected.push({ index, error: { code: "invalid_request", message: issue ? `${issue.path.join(".") || "item"}: ${issue.message}` : "invalid item" } });
      continue;
    }
    const { to, ...content } = parsed.data;
    try {
      if ("template" in content) await checkTemplate(content.template, "template");
      drafts.push(await buildDraft(env, accountId, resolved.get(to) ?? to, content as MessageContent, { ...opts, batchId }));
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      rejected.push({ index, error: { code: err.code, message: err.message } });
    }
  }
  const { db } = await accountShard(env, accountId);
  // The batch first (its progress is read from D1), then the messages to the session's object,
  // which keeps them and writes them to D1 with its group commits. A refusal takes the batch back.
  const batchRow = { id: batchId, accountId, sessionId, total: drafts.length, createdAt: Date.now() };
  await db.insert(messageBatches).values(batchRow).onConflictDoNothing();
  let outcome: QueueOutcome;
  try {
    outcome = await (await ownedSessionStub(env, accountId, sessionId)).queueBulk(accountId, drafts, batchId);
  } catch (err) {
    await dropBatch(db, batchRow);
    throw err;
  }
  if (!outcome.ok) {
    await dropBatch(db, batchRow);
    if (outcome.code === "not_found") throw errors.notFound("session");
    if (outcome.code === "busy") throw errors.unavailable("The session has too many changes waiting to be stored; try again shortly.", 5);
    throw errors.sessionNotWorking(sessionId, outcome.status);
  }
  return { batchId, accepted: drafts.length, messageIds: drafts.map((d) => d.id), rejected };
}

/** A batch whose messages the session refused: its row goes (only the one this request made). */
async function dropBatch(db: Shard["db"], row: { id: string; accountId: string; createdAt: number }): Promise<void> {
  await db
    .delete(messageBatches)
    .where(and(eq(messageBatches.id, row.id), eq(messageBatches.accountId, row.accountId), eq(messageBatches.createdAt, row.createdAt)))
    .catch((err: unknown) => log.error("refused batch not removed", { batchId: row.id, error: String(err) }));
}

/** `POST /api/messages/bulk`: the queued result without the message ids. */
export async function sendBulk(env: Env, accountId: string, body: { sessionId: string; messages: unknown[] }, opts: SendOptions): Promise<Omit<QueuedResult, "messageIds">> {
  const { batchId, accepted, rejected } = await queueMessages(env, accountId, body.sessionId, body.messages, opts);
  return { batchId, accepted, rejected };
}

export async function getBatch(env: Env, accountId: string, batchId: string) {
  const { db } = await accountShard(env, accountId);
  const batch = await db.select().from(messageBatches).where(and(eq(messageBatches.accountId, accountId), eq(messageBatches.id, batchId))).get();
  if (!batch) throw errors.notFound("batch");
  await commitSessionWrites(env, accountId, batch.sessionId);
  const counts = await batchStatusCounts(await accountShard(env, accountId), accountId, batchId);
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
  const digits = parseChatAddress(chatId);
  if (!digits) throw errors.invalidRequest(`The chat id must be ${ACCEPTED_CHAT_FORMS}.`, [{ path: "chatId", message: "not a valid chat id" }]);
  if (q.sessionId) await loadSession(env, accountId, q.sessionId);
  await commitSessionWrites(env, accountId, q.sessionId);
  const cursor = decodeCursor(q.cursor, IdCursor);
  const rows = await chatMessages(await accountShard(env, accountId), accountId, digits, { sessionId: q.sessionId, beforeId: cursor?.id, limit: q.limit + 1 });
  const page = toPage(rows, q.limit, (r) => ({ id: r.id }));
  return { data: page.data.map(toMessage), nextCursor: page.nextCursor };
}

/** Where the file of a message can be fetched: a signed, expiring URL of ours, or the link it was sent with. */
export async function mediaUrl(env: Env, accountId: string, id: string, origin: string): Promise<string> {
  const shard = await accountShard(env, accountId);
  let row = await messageById(shard, id);
  if (!row) {
    // Sent a moment ago, it may still be in its session's buffer: the account's sessions commit, then one more look.
    await commitSessionWrites(env, accountId);
    row = await messageById(shard, id);
  }
  if (!row?.media || row.accountId !== accountId) throw errors.notFound("message with media");
  const media = JSON.parse(row.media) as StoredMedia;
  if (media.mediaId) return signedMediaUrl(env, origin, media.mediaId);
  if (media.status === "pending") throw errors.conflict("media_pending", "The file is still being fetched from the network; try again in a few seconds.");
  if (media.status === "failed") throw errors.conflict("media_failed", `The file could not be stored: ${media.reason ?? "unknown reason"}`, { reason: media.reason ?? null });
  if (media.url) return media.url;
  throw errors.notFound("message with media");
}
