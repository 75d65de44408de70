import { and, eq, inArray, sql } from "drizzle-orm";
import { messages } from "../../db/schema/index.ts";
import { enqueueEvents, prepareEventAfterChange } from "../../events/emit.ts";
import { chunk } from "../../platform/batching.ts";
import { toMessage, type MessageRow, type StoredMedia } from "../messages/mapper.ts";
import { ID_CHUNK } from "./reads.ts";
import type { Shard } from "../../platform/shards.ts";
import { sequencedOne } from "../session-sequence.ts";

/** The files of inbound messages: settling a pending one, and the cron's sweep of those left pending. */

/**
 * Settles the file of an inbound message whose media is still `pending`: `stored`, or `failed` for
 * good. The change and its event (`message.media_stored` / `message.media_failed`, the message as
 * `data`) are written in one batch, and the event only if the row was still pending, so a retried
 * fetch (the queue's backstop after the Durable Object's own attempt) never overwrites a settled
 * file nor announces it twice. Answers whether this call settled it.
 */
export async function settlePendingMedia(env: Env, shard: Shard, row: MessageRow, media: StoredMedia): Promise<boolean> {
  const db = shard.db;
  const settled = JSON.stringify(media);
  const update = db
    .update(messages)
    .set({ media: settled })
    .where(and(eq(messages.id, row.id), eq(messages.accountId, row.accountId), sql`json_extract(${messages.media}, '$.status') = 'pending'`));
  const type = media.status === "stored" ? "message.media_stored" : "message.media_failed";
  const announce = prepareEventAfterChange(shard, await sequencedOne(env, { type, accountId: row.accountId, sessionId: row.sessionId, data: toMessage({ ...row, media: settled }) }));
  const [changed] = await db.batch([update, announce.statement]);
  if (changed.meta.changes !== 1) return false;
  await enqueueEvents(env, shard, [announce.event.id]);
  return true;
}

/** The condition of the partial index `messages_pending_media_idx` (written the same, so it is used). */
const MEDIA_PENDING = "json_extract(media, '$.status') = 'pending'";

/**
 * Inbound messages whose file is still `pending`, received before `before` and not swept since
 * `before`, oldest first: at most `limit` (for the cron's sweep).
 */
export async function stalePendingMedia(shard: Shard, before: number, limit: number): Promise<MessageRow[]> {
  const res = await shard.d1.prepare(
    `SELECT id FROM messages WHERE ${MEDIA_PENDING} AND created_at < ?1 AND coalesce(json_extract(media, '$.sweptAt'), 0) < ?1 ORDER BY created_at LIMIT ?2`,
  )
    .bind(before, limit)
    .all<{ id: string }>();
  if (res.results.length === 0) return [];
  return shard.db.select().from(messages).where(inArray(messages.id, res.results.map((r) => r.id))).all();
}

/** Counts one more sweep (at `now`) on the files of these messages still pending; answers those. */
export async function markMediaSwept(shard: Shard, ids: string[], now: number): Promise<{ id: string; sessionId: string }[]> {
  const out: { id: string; sessionId: string }[] = [];
  for (const part of chunk(ids, ID_CHUNK)) {
    const res = await shard.d1.prepare(
      `UPDATE messages SET media = json_set(media, '$.sweeps', coalesce(json_extract(media, '$.sweeps'), 0) + 1, '$.sweptAt', ?1)
        WHERE id IN (${part.map((_, i) => `?${i + 2}`).join(", ")}) AND ${MEDIA_PENDING} RETURNING id, session_id`,
    )
      .bind(now, ...part)
      .all<{ id: string; session_id: string }>();
    out.push(...res.results.map((r) => ({ id: r.id, sessionId: r.session_id })));
  }
  return out;
}

