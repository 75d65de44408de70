import { campaignStatusCounts } from "../store/campaigns.ts";
import type { CampaignRow } from "./mapper.ts";
import type { CampaignStats } from "./schemas.ts";
import { accountShard } from "../../platform/shards.ts";

/**
 * Live stats, counted from the campaign's messages (index on campaign_id, status): no write per
 * receipt, and delivery/read keep updating after completion. A recipient without a message yet, or
 * whose message is still pending, is `pending`, so the states always add up to `total`. `charges`
 * sums what the network reported billable (WhatsApp status `pricing`), per pricing category.
 */
/** At most this many pricing categories are counted per campaign (store/campaigns.ts). */
export const MAX_CHARGE_CATEGORIES = 16;

export async function statsOf(env: Env, rows: CampaignRow[]): Promise<Map<string, CampaignStats>> {
  if (rows.length === 0) return new Map();
  // One account's campaigns (a page, or one campaign): its shard.
  const counts = await campaignStatusCounts(await accountShard(env, rows[0]!.accountId), rows.filter((r) => r.startedAt !== null).map((r) => r.id));
  const out = new Map<string, CampaignStats>();
  for (const row of rows) {
    const { charges, ...c } = counts.get(row.id) ?? { sent: 0, delivered: 0, read: 0, failed: 0, charges: { billable: 0, byCategory: {} } };
    const pending = Math.max(0, row.total - row.skipped - c.sent - c.delivered - c.read - c.failed);
    out.set(row.id, { total: row.total, pending, ...c, skipped: row.skipped, charges });
  }
  return out;
}
