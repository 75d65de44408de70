import { log } from "../../platform/log.ts";
import type { StoredMedia } from "../messages/mapper.ts";
import { markMediaSwept, settlePendingMedia, stalePendingMedia } from "../store/media.ts";
import { enqueueMediaFetch } from "./inbound.ts";
import { eachShard, type Shard } from "../../platform/shards.ts";

/**
 * The cron's sweep of inbound files left `pending`: the message row is written before its fetch is
 * queued, so a failed queue send (a replayed webhook is deduplicated and queues nothing) would
 * leave the file pending for good. A file pending for SWEEP_AFTER_MS (longer than a queued job's
 * whole retry chain) has its fetch queued again, at most SWEEP_BUDGET times, SWEEP_AFTER_MS apart;
 * then it is `failed`, announced once as `message.media_failed`. The Cloud API keeps a media id
 * downloadable for weeks, so a late retry can still succeed.
 */
export const SWEEP_AFTER_MS = 15 * 60_000;
export const SWEEP_BUDGET = 3;
/** Rows per cron run: a backlog is worked off over several minutes, never in one burst. */
export const SWEEP_CAP = 50;

export const SWEEP_FAILED_REASON = "The file could not be fetched from the network (still pending after repeated retries).";

/** How a swept file's fetch is queued again (the media job of SEND_QUEUE; replaceable for tests of the sweep alone). */
export type Requeue = (env: Env, sessionId: string, ids: string[]) => Promise<unknown>;

export async function sweepPendingMedia(env: Env, now: number, cap = SWEEP_CAP, requeue: Requeue = enqueueMediaFetch): Promise<{ requeued: number; failed: number }> {
  const total = { requeued: 0, failed: 0 };
  await eachShard(env, "messaging.media-sweep", async (shard) => {
    const done = await sweepShard(env, shard, now, cap, requeue);
    total.requeued += done.requeued;
    total.failed += done.failed;
  });
  return total;
}

async function sweepShard(env: Env, shard: Shard, now: number, cap: number, requeue: Requeue): Promise<{ requeued: number; failed: number }> {
  const rows = await stalePendingMedia(shard, now - SWEEP_AFTER_MS, cap);
  const again: string[] = [];
  let failed = 0;
  for (const row of rows) {
    const media = JSON.parse(row.media!) as StoredMedia;
    if ((media.sweeps ?? 0) < SWEEP_BUDGET) again.push(row.id);
    else if (await settlePendingMedia(env, shard, row, { ...media, status: "failed", reason: SWEEP_FAILED_REASON })) failed++;
  }
  const marked = again.length ? await markMediaSwept(shard, again, now) : [];
  const bySession = new Map<string, string[]>();
  for (const m of marked) bySession.set(m.sessionId, [...(bySession.get(m.sessionId) ?? []), m.id]);
  for (const [sessionId, ids] of bySession) await requeue(env, sessionId, ids);
  if (marked.length || failed) log.info("pending inbound media swept", { shard: shard.index, requeued: marked.length, failed });
  return { requeued: marked.length, failed };
}
