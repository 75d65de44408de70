import { and, asc, eq, isNull, lt } from "drizzle-orm";
import { campaigns } from "../../db/schema/index.ts";
import { enqueueEvents, prepareEventAfterChange } from "../../events/emit.ts";
import { eachItem } from "../../platform/cron-loop.ts";
import { ApiError } from "../../platform/errors.ts";
import { messagesSql } from "../store/campaigns.ts";
import { toCampaign } from "./mapper.ts";
import { statsOf } from "./stats.ts";
import type { Shard } from "../../platform/shards.ts";
import { sequencedOne } from "../session-sequence.ts";

/**
 * running -> completed once every recipient is terminal (sent, failed or skipped; read receipts are
 * not waited for). One conditional UPDATE decides it, so however many callers race (every outbox
 * chunk of the DO, the cron, resume), exactly one wins and emits `campaign.completed`.
 */
export async function maybeComplete(env: Env, shard: Shard, campaignId: string): Promise<boolean> {
  const now = Date.now();
  const won = await shard.d1.prepare(
    `UPDATE campaigns SET status = 'completed', status_reason = NULL, completed_at = ?1, updated_at = ?1
      WHERE id = ?2 AND status = 'running'
        AND NOT EXISTS (SELECT 1 FROM campaign_recipients WHERE campaign_id = ?2 AND status = 'pending')
        AND NOT ${messagesSql.campaignHasPending("?2")}
      RETURNING id`,
  )
    .bind(now, campaignId)
    .first<{ id: string }>();
  if (!won) return false;
  await announceCompletion(env, shard, campaignId);
  return true;
}

/** Marks a completion that can never be announced (its event does not fit), so the backstop stops retrying it. */
export const UNANNOUNCEABLE = "unannounceable";

/**
 * Emits `campaign.completed` with the final campaign: the event and the campaign's record of it are
 * written in one batch, and only if no one recorded it meanwhile.
 */
async function announceCompletion(env: Env, shard: Shard, campaignId: string): Promise<void> {
  const { db } = shard;
  const row = await db.select().from(campaigns).where(eq(campaigns.id, campaignId)).get();
  if (!row || row.completionEventId !== null) return;
  const stats = (await statsOf(env, [row])).get(row.id)!;
  const mark = db.update(campaigns).set({ completionEventId: "pending" }).where(and(eq(campaigns.id, campaignId), isNull(campaigns.completionEventId)));
  const announce = prepareEventAfterChange(shard, await sequencedOne(env, { type: "campaign.completed", accountId: row.accountId, sessionId: row.sessionId, data: toCampaign(row, stats) }));
  const record = db.update(campaigns).set({ completionEventId: announce.event.id }).where(and(eq(campaigns.id, campaignId), eq(campaigns.completionEventId, "pending")));
  const [claimed] = await db.batch([mark, announce.statement, record]);
  if (claimed.meta.changes === 1) await enqueueEvents(env, shard, [announce.event.id]);
}

/**
 * Cron backstop: a completion whose event was never recorded (the worker died between the UPDATE
 * and the announcement) is announced after a grace period. Oldest first, one by one: a campaign
 * that fails is logged and skipped, and one that can never be announced (legacy rows larger than an
 * event) is marked so, so neither holds up the others.
 */
export async function announceMissedCompletions(env: Env, shard: Shard, now: number): Promise<void> {
  const { db } = shard;
  const missed = await db
    .select({ id: campaigns.id })
    .from(campaigns)
    .where(and(eq(campaigns.status, "completed"), isNull(campaigns.completionEventId), lt(campaigns.completedAt, now - 120_000)))
    .orderBy(asc(campaigns.completedAt), asc(campaigns.id))
    .limit(50)
    .all();
  await eachItem("campaigns.announce-completion", missed, (m) => m.id, async (m) => {
    try {
      await announceCompletion(env, shard, m.id);
    } catch (err) {
      if (err instanceof ApiError && err.code === "event_too_large") {
        await db.update(campaigns).set({ completionEventId: UNANNOUNCEABLE }).where(and(eq(campaigns.id, m.id), isNull(campaigns.completionEventId)));
      }
      throw err;
    }
  });
}
