import { and, eq, isNotNull, sql } from "drizzle-orm";
import { messages } from "../../db/schema/index.ts";
import { prepareEvents } from "../../events/emit.ts";
import type { Content } from "../messages/content.ts";
import { toMessage, type MessageRow } from "../messages/mapper.ts";
import type { Shard } from "../../platform/shards.ts";
import { sequenced } from "../session-sequence.ts";

/** What a sender does to a message after it was received: edits and deletes; and what the network adds to a sent one. */

type Enqueue = (eventIds: string[]) => void;

/** Not deleted, and not edited later than `iso` (edits can arrive out of order; the newest wins). */
const editable = (iso: string) =>
  sql`json_extract(coalesce(${messages.content}, '{}'), '$.deletedAt') is null and coalesce(json_extract(${messages.content}, '$.editedAt'), '') < ${iso}`;

async function announce(env: Env, shard: Shard, rows: MessageRow[], type: "message.edited" | "message.deleted", enqueue: Enqueue): Promise<void> {
  if (rows.length === 0) return;
  const prepared = prepareEvents(env, shard, await sequenced(env, rows.map((row) => ({ type, accountId: row.accountId, sessionId: row.sessionId, data: toMessage(row) }))));
  await shard.db.batch(prepared.statements as [(typeof prepared.statements)[number], ...(typeof prepared.statements)[number][]]);
  enqueue(prepared.events.map((e) => e.id));
}

/**
 * The sender edited an inbound message of this session (known by the network's id): its text (or its
 * file's caption) becomes the new one and `editedAt` is set; `message.edited`. Answers the row, or
 * null when the message is unknown, deleted, or already shows a later edit.
 */
export async function editInbound(env: Env, shard: Shard, sessionId: string, externalId: string, change: { text?: string; caption?: string }, at: number, enqueue: Enqueue): Promise<MessageRow | null> {
  const iso = new Date(at).toISOString();
  const set: Record<string, unknown> = { content: sql`json_set(coalesce(${messages.content}, '{}'), '$.editedAt', ${iso})` };
  if (change.text !== undefined) set.text = change.text;
  if (change.caption !== undefined) set.media = sql`case when ${messages.media} is null then null else json_set(${messages.media}, '$.caption', ${change.caption}) end`;
  const rows = await shard.db
    .update(messages)
    .set(set as Partial<MessageRow>)
    .where(and(eq(messages.sessionId, sessionId), eq(messages.externalId, externalId), eq(messages.direction, "inbound"), editable(iso)))
    .returning();
  await announce(env, shard, rows, "message.edited", enqueue);
  return rows[0] ?? null;
}

/**
 * The sender deleted an inbound message: its text, file and typed body are dropped (only the
 * deletion time stays in `content`) and `message.deleted`. Answers the row, or null when unknown or
 * already deleted. The caller removes a stored file's bytes (`media` of the row before).
 */
export async function revokeInbound(env: Env, shard: Shard, sessionId: string, externalId: string, at: number, enqueue: Enqueue): Promise<{ row: MessageRow; media: string | null } | null> {
  const db = shard.db;
  const before = await db
    .select({ media: messages.media })
    .from(messages)
    .where(and(eq(messages.sessionId, sessionId), eq(messages.externalId, externalId), eq(messages.direction, "inbound")))
    .get();
  const deleted: Content = { deletedAt: new Date(at).toISOString() };
  const rows = await db
    .update(messages)
    .set({ text: null, media: null, template: null, content: JSON.stringify(deleted) })
    .where(and(eq(messages.sessionId, sessionId), eq(messages.externalId, externalId), eq(messages.direction, "inbound"), sql`json_extract(coalesce(${messages.content}, '{}'), '$.deletedAt') is null`))
    .returning();
  await announce(env, shard, rows, "message.deleted", enqueue);
  return rows[0] ? { row: rows[0], media: before?.media ?? null } : null;
}

/** Merges what the network said of an outbound message (its pricing, a failure's details) into its `content`. */
export async function addNetworkDetail(shard: Shard, sessionId: string, externalId: string, detail: Pick<Content, "pricing" | "networkError">): Promise<void> {
  await shard.db
    .update(messages)
    .set({ content: sql`json_patch(coalesce(${messages.content}, '{}'), ${JSON.stringify(detail)})` })
    .where(and(eq(messages.sessionId, sessionId), eq(messages.externalId, externalId), eq(messages.direction, "outbound"), isNotNull(messages.externalId)));
}
