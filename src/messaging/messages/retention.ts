import { itemsPerStatement } from "../../platform/d1.ts";
import { chunk } from "../../platform/batching.ts";
import { daysAgo, oldestExpired, retention } from "../../platform/retention.ts";
import { MEDIA_ID } from "../media/store.ts";

/** Ids per DELETE, with room for the statement's own parameters. */
const IDS_PER_DELETE = itemsPerStatement(1, 10);

/**
 * Cron: messages are kept unless RETENTION_MESSAGES_DAYS is set; then messages past it go (never one
 * still pending), with the media uploaded for them. Media objects are deleted before the rows.
 */
export async function purgeExpiredMessages(env: Env, now: number): Promise<number> {
  const days = retention(env).RETENTION_MESSAGES_DAYS;
  if (days === null) return 0;
  const rows = await oldestExpired<{ id: string; media_id: string | null }>(
    env.DB,
    { table: "messages", prefix: "msg", before: daysAgo(now, days), where: "status <> 'pending'" },
    "id, json_extract(media, '$.mediaId') AS media_id",
  );
  if (rows.length === 0) return 0;
  const media = rows.flatMap((r) => (r.media_id && MEDIA_ID.test(r.media_id) ? [`media/${r.media_id}`] : []));
  if (media.length) await env.FILES.delete(media);
  for (const part of chunk(rows, IDS_PER_DELETE)) {
    await env.DB.prepare(`DELETE FROM messages WHERE id IN (${part.map(() => "?").join(", ")})`)
      .bind(...part.map((r) => r.id))
      .run();
  }
  return rows.length;
}
