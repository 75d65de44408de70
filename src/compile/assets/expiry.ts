import { config } from "../../platform/config.ts";
import { log } from "../../platform/log.ts";
import { PURGE_BATCH } from "../../platform/retention.ts";
import { assetKey, takeExpiredAssets } from "./store.ts";
import { directoryD1 } from "../../platform/shards.ts";

/** An upload whose object was never written (its Worker died) stops holding quota after this long. */
const UNSTORED_AFTER_MS = 60 * 60 * 1000;

/**
 * Cron: assets unused for `ASSET_IDLE_DAYS` go, least recently used first, at most PURGE_BATCH per
 * tick (and as many uploads that never finished). Rows first, then their objects (R2 deletes up to
 * 1,000 keys at once); an object whose delete fails is logged with its key.
 */
export async function expireAssets(env: Env, now: number): Promise<number> {
  const { idleMs } = config(env).assets;
  const rows = await takeExpiredAssets(directoryD1(env), idleMs === null ? null : now - idleMs, now - UNSTORED_AFTER_MS, PURGE_BATCH);
  if (rows.length === 0) return 0;
  const keys = rows.map((r) => assetKey(r.account_id, r.id));
  await env.FILES.delete(keys).catch((err) => log.error("expired asset objects not deleted", { keys: keys.slice(0, 20), count: keys.length, error: String(err) }));
  return rows.length;
}
