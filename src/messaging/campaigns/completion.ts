import { and, eq, isNull, lt } from "drizzle-orm";
import { getDb } from "../../db/client.ts";
import { campaigns } from "../../db/schema/index.ts";
import { emit } from "../../events/emit.ts";
import { toCampaign } from "./mapper.ts";
import { statsOf } from "./stats.ts";

/**
 * running -> completed once every recipient is terminal (sent, failed or skipped; read receipts are
 * not waited for). One conditional UPDATE decides it, so however many callers race (every outbox
 * chunk of the DO, the cron, resume), exactly one wins and emits `campaign.completed`.
 */
export async function maybeComplete(env: Env, campaignId: string): Promise<boolean> {
  const now = Date.now();
  const won = await env.DB.prepare(
    `UPDATE campaigns SET status = 'completed', status_reason = NULL, completed_at = ?1, updated_at = ?1
      WHERE id = ?2 AND status = 'running'
        AND NOT EXISTS (SELECT 1 FROM campaign_recipients WHERE campaign_id = ?2 AND status = 'pending')
        AND NOT EXISTS (SELECT 1 FROM messages WHERE campaign_id = ?2 AND status = 'pending')
      RETURNING id`,
  )
    .bind(now, campaignId)
    .first<{ id: string }>();
  if (!won) return false;
  await announceCompletion(env, campaignId);
  return true;
}

/** Emits `campaign.completed` with the final campaign and records the event id. */
async function announceCompletion(env: Env, campaignId: string): Promise<void> {
  const db = getDb(env.DB);
  const row = await db.select().from(campaigns).where(eq(campaigns.id, campaignId)).get();
  if (!row) return;
  const stats = (await statsOf(env, [row])).get(row.id)!;
  const [event] = await emit(env, { type: "campaign.completed", accountId: row.accountId, sessionId: row.sessionId, data: toCampaign(row, stats) });
  await db.update(campaigns).set({ completionEventId: event!.id }).where(eq(campaigns.id, campaignId));
}

/**
 * Cron backstop: a completion whose event was never recorded (the worker died between the UPDATE
 * and emit) is announced after a grace period.
 */
export async function announceMissedCompletions(env: Env, now: number): Promise<void> {
  const missed = await getDb(env.DB)
    .select({ id: campaigns.id })
    .from(campaigns)
    .where(and(eq(campaigns.status, "completed"), isNull(campaigns.completionEventId), lt(campaigns.completedAt, now - 120_000)))
    .limit(50)
    .all();
  for (const m of missed) await announceCompletion(env, m.id);
}
