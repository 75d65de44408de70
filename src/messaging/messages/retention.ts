import { daysAgo, retention } from "../../platform/retention.ts";
import { MEDIA_ID } from "../media/store.ts";
import { deleteMessages, oldestSettled } from "../store/retention.ts";
import { eachShard, type Shard } from "../../platform/shards.ts";

/**
 * Cron: messages are kept unless RETENTION_MESSAGES_DAYS is set; then messages past it go (never one
 * still pending), with the media uploaded for them. Media objects are deleted before the rows.
 */
export async function purgeExpiredMessages(env: Env, now: number): Promise<number> {
  const days = retention(env).RETENTION_MESSAGES_DAYS;
  if (days === null) return 0;
  let purged = 0;
  await eachShard(env, "messaging.retention", async (shard) => {
    purged += await purgeShard(env, shard, daysAgo(now, days));
  });
  return purged;
}

async function purgeShard(env: Env, shard: Shard, before: number): Promise<number> {
  const rows = await oldestSettled(shard, before);
  if (rows.length === 0) return 0;
  const media = rows.flatMap((r) => (r.media_id && MEDIA_ID.test(r.media_id) ? [`media/${r.media_id}`] : []));
  if (media.length) await env.FILES.delete(media);
  await deleteMessages(shard, rows.map((r) => r.id));
  return rows.length;
}
