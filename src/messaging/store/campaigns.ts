import { chunk } from "../../platform/batching.ts";
import { claimInserts, type CampaignClaim, type ClaimRow } from "./campaign-claim-sql.ts";
import { ID_CHUNK } from "./reads.ts";
import type { Shard } from "../../platform/shards.ts";

// ---- campaigns' messages (set-based: one statement per range, never one per recipient) -------

/** The INSERTs of one campaign claim (for the caller's transaction): see `claimInserts`. */
export function claimCampaignMessagesStatements(shard: Shard, c: CampaignClaim, rows: ClaimRow[]): D1PreparedStatement[] {
  return claimInserts(c, rows).map((s) => shard.d1.prepare(s.sql).bind(...s.args));
}

/** Message ids of the `queued` recipients in [from, to] whose message is still `pending`, in seq order. */
export async function queuedCampaignMessageIds(shard: Shard, campaignId: string, from: number, to: number): Promise<string[]> {
  const res = await shard.d1.prepare(
    `SELECT r.message_id AS id FROM campaign_recipients r JOIN messages m ON m.id = r.message_id
      WHERE r.campaign_id = ? AND r.seq BETWEEN ? AND ? AND r.status = 'queued' AND m.status = 'pending' ORDER BY r.seq`,
  )
    .bind(campaignId, from, to)
    .all<{ id: string }>();
  return res.results.map((r) => r.id);
}

/**
 * Blocks of `blockSize` recipients that still have some to send: not yet claimed, or (unless
 * `unclaimedOnly`) claimed with the message unsent.
 */
export async function campaignBlocksToSend(shard: Shard, campaignId: string, blockSize: number, unclaimedOnly: boolean): Promise<number[]> {
  const res = await shard.d1.prepare(
    `SELECT DISTINCT (r.seq - 1) / ?2 AS b FROM campaign_recipients r LEFT JOIN messages m ON m.id = r.message_id
      WHERE r.campaign_id = ?1 AND (r.status = 'pending' ${unclaimedOnly ? "" : "OR (r.status = 'queued' AND m.status = 'pending')"}) ORDER BY b`,
  )
    .bind(campaignId, blockSize)
    .all<{ b: number }>();
  return res.results.map((r) => r.b);
}

export type FinalCounts = Record<"sent" | "delivered" | "read" | "failed", number>;
/** What the network charged for a campaign's messages (from their status updates): billable ones, in all and per pricing category. */
export interface Charges {
  billable: number;
  byCategory: Record<string, number>;
}

/**
 * Per campaign, how many of its messages are past `pending` in each status (index on campaign_id,
 * status), and how many the network reported billable, per pricing category.
 */
export async function campaignStatusCounts(shard: Shard, campaignIds: string[]): Promise<Map<string, FinalCounts & { charges: Charges }>> {
  const counts = new Map<string, FinalCounts & { charges: Charges }>();
  for (const part of chunk(campaignIds, ID_CHUNK)) {
    const res = await shard.d1.prepare(
      `SELECT campaign_id AS id, status, json_extract(content, '$.pricing.category') AS category, count(*) AS n, sum(json_extract(content, '$.pricing.billable') = 1) AS billable
       FROM messages WHERE campaign_id IN (${part.map(() => "?").join(",")}) AND status IN ('sent','delivered','read','failed') GROUP BY campaign_id, status, category`,
    )
      .bind(...part)
      .all<{ id: string; status: keyof FinalCounts; category: unknown; n: number; billable: number | null }>();
    for (const r of res.results) {
      const c = counts.get(r.id) ?? { sent: 0, delivered: 0, read: 0, failed: 0, charges: { billable: 0, byCategory: {} } };
      c[r.status] += r.n;
      const billable = r.billable ?? 0;
      c.charges.billable += billable;
      // Categories are Meta's few (marketing, utility, ...): the first 16 are kept, so stats stay small in events.
      const category = typeof r.category === "string" ? r.category.slice(0, 64) : null;
      if (billable > 0 && category && (category in c.charges.byCategory || Object.keys(c.charges.byCategory).length < 16)) {
        c.charges.byCategory[category] = (c.charges.byCategory[category] ?? 0) + billable;
      }
      counts.set(r.id, c);
    }
  }
  return counts;
}

/**
 * SQL conditions over `messages` for campaigns' own conditional statements, which must decide in
 * the same statement (a separate read would race the claims): the campaign bound at `param` has a
 * pending message; the message with id `column` exists.
 */
export const messagesSql = {
  campaignHasPending: (param: string) => `EXISTS (SELECT 1 FROM messages WHERE campaign_id = ${param} AND status = 'pending')`,
  exists: (column: string) => `EXISTS (SELECT 1 FROM messages m WHERE m.id = ${column})`,
};

/** Deletes the campaign's pending messages except `keep` (at most ID_CHUNK ids; for the caller's transaction). */
export function deletePendingOfCampaignStatement(shard: Shard, campaignId: string, accountId: string, keep: string[]): D1PreparedStatement {
  const notIn = keep.length ? `AND id NOT IN (${keep.map((_, i) => `?${i + 3}`).join(",")})` : "";
  return shard.d1.prepare(`DELETE FROM messages WHERE campaign_id = ?1 AND account_id = ?2 AND status = 'pending' ${notIn}`).bind(campaignId, accountId, ...keep);
}

/** A campaign's recipients with their message's live state. */
export interface RecipientWithMessage {
  seq: number;
  contact_id: string;
  phone: string;
  name: string | null;
  reason: string | null;
  message_id: string | null;
  live: "pending" | "sent" | "delivered" | "read" | "failed" | "skipped";
  error_code: string | null;
  error_message: string | null;
  sent_at: number | null;
  delivered_at: number | null;
  read_at: number | null;
}

const RECIPIENT_STATUS_SQL = "CASE WHEN r.status = 'skipped' THEN 'skipped' WHEN m.status IS NULL OR m.status = 'pending' THEN 'pending' ELSE m.status END";

/** One page of a campaign's recipients (seq after `afterSeq`), optionally only those in one live status. */
export async function recipientsWithMessages(shard: Shard, accountId: string, campaignId: string, q: { afterSeq: number; limit: number; status?: RecipientWithMessage["live"] }): Promise<RecipientWithMessage[]> {
  const res = await shard.d1.prepare(
    `SELECT r.seq, r.contact_id, r.phone, r.name, r.reason, r.message_id, ${RECIPIENT_STATUS_SQL} AS live,
            m.error_code, m.error_message, m.sent_at, m.delivered_at, m.read_at
       FROM campaign_recipients r LEFT JOIN messages m ON m.id = r.message_id
      WHERE r.campaign_id = ?1 AND r.account_id = ?2 AND r.seq > ?3 ${q.status ? `AND ${RECIPIENT_STATUS_SQL} = ?5` : ""}
      ORDER BY r.seq LIMIT ?4`,
  )
    .bind(campaignId, accountId, q.afterSeq, q.limit, ...(q.status ? [q.status] : []))
    .all<RecipientWithMessage>();
  return res.results;
}
