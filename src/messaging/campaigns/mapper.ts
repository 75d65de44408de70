import type { campaigns } from "../../db/schema/index.ts";
import type { Audience, Campaign, CampaignMessage, CampaignStats, Pacing } from "./schemas.ts";
import { iso } from "../../platform/time.ts";

export type CampaignRow = typeof campaigns.$inferSelect;

export function pacingOf(row: CampaignRow): Pacing | null {
  return row.pacing ? (JSON.parse(row.pacing) as Pacing) : null;
}

/**
 * Seconds until every recipient is sent: from the pacing, else from the rate observed so far; never
 * sooner than the session's limits allow (`finishAt`, from its queue: the messaging limit can hold a
 * campaign for days).
 */
function etaSeconds(row: CampaignRow, stats: CampaignStats, now: number, finishAt: number | null): number | null {
  const byRate = rateEta(row, stats, now);
  if (finishAt === null || byRate === 0 || row.status !== "running") return byRate;
  return Math.max(byRate ?? 0, Math.ceil((finishAt - now) / 1000));
}

function rateEta(row: CampaignRow, stats: CampaignStats, now: number): number | null {
  if (row.status === "completed") return 0;
  if (row.status !== "running" || row.startedAt === null) return null;
  if (stats.pending === 0) return 0;
  const pacing = pacingOf(row);
  if (pacing) return Math.ceil((stats.pending * 60) / pacing.perMinute);
  const done = stats.total - stats.skipped - stats.pending;
  if (done <= 0) return null;
  return Math.ceil(((now - row.startedAt) / done) * stats.pending / 1000);
}

export function toCampaign(row: CampaignRow, stats: CampaignStats, now = Date.now(), finishAt: number | null = null): Campaign {
  const eta = etaSeconds(row, stats, now, finishAt);
  return {
    id: row.id,
    name: row.name,
    sessionId: row.sessionId,
    status: row.status,
    statusReason: row.statusReason,
    message: JSON.parse(row.message) as CampaignMessage,
    audience: JSON.parse(row.audience) as Audience,
    scheduledAt: iso(row.scheduledAt),
    pacing: pacingOf(row),
    stats,
    startedAt: iso(row.startedAt),
    completedAt: iso(row.completedAt),
    cancelledAt: iso(row.cancelledAt),
    etaSeconds: eta,
    eta: eta === null ? null : new Date(now + eta * 1000).toISOString(),
    createdAt: new Date(row.createdAt).toISOString(),
    updatedAt: new Date(row.updatedAt).toISOString(),
  };
}
