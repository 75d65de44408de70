import { daysAgo, retention } from "../../platform/retention.ts";
import { MEDIA_ID } from "../media/store.ts";
import { deleteMessages, oldestSettled } from "../store/retention.ts";

/**
 * Cron: messages are kept unless RETENTION_MESSAGES_DAYS is set; then messages past it go (never one
 * still pending), with the media uploaded for them. Media objects are deleted before the rows.
 */
export async function purgeExpiredMessages(env: Env, now: number): Promise<number> {
  const days = retention(env).RETENTION_MESSAGES_DAYS;
  if (days === null) return 0;
  const rows = await oldestSettled(env, daysAgo(now, days));
  if (rows.length === 0) return 0;
  const media = rows.flatMap((r) => (r.media_id && MEDIA_ID.test(r.media_id) ? [`media/${r.media_id}`] : []));
  if (media.length) await env.FILES.delete(media);
  await deleteMessages(env, rows.map((r) => r.id));
  return rows.length;
}
