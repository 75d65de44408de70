import { ID_CHUNK } from "../messages/store.ts";
import { chunk } from "../../platform/batching.ts";
import type { CampaignRow } from "./mapper.ts";
import type { CampaignStats } from "./schemas.ts";

type Counts = Record<"sent" | "delivered" | "read" | "failed", number>;

/**
 * Live stats, counted from the campaign's messages (index on campaign_id, status): no write per
 * receipt, and delivery/read keep updating after completion. A recipient without a message yet, or
 * whose message is still pending, is `pending`, so the states always add up to `total`.
 */
export async function statsOf(env: Env, rows: CampaignRow[]): Promise<Map<string, CampaignStats>> {
  const counts = new Map<string, Counts>();
  const started = rows.filter((r) => r.startedAt !== null).map((r) => r.id);
  for (const part of chunk(started, ID_CHUNK)) {
    const res = await env.DB.prepare(
      `SELECT campaign_id AS id, status, count(*) AS n FROM messages WHERE campaign_id IN (${part.map(() => "?").join(",")}) AND status IN ('sent','delivered','read','failed') GROUP BY campaign_id, status`,
    )
      .bind(...part)
      .all<{ id: string; status: keyof Counts; n: number }>();
    for (const r of res.results) {
      const c = counts.get(r.id) ?? { sent: 0, delivered: 0, read: 0, failed: 0 };
      c[r.status] = r.n;
      counts.set(r.id, c);
    }
  }
  const out = new Map<string, CampaignStats>();
  for (const row of rows) {
    const c = counts.get(row.id) ?? { sent: 0, delivered: 0, read: 0, failed: 0 };
    const pending = Math.max(0, row.total - row.skipped - c.sent - c.delivered - c.read - c.failed);
    out.set(row.id, { total: row.total, pending, ...c, skipped: row.skipped });
  }
  return out;
}
