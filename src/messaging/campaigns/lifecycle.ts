/**
 * Campaign states and the moves between them:
 * draft -> scheduled -> running -> completed; running <-> paused; cancelled from any state before completed.
 */
export const CAMPAIGN_STATUSES = ["draft", "scheduled", "running", "paused", "completed", "cancelled"] as const;
export type CampaignStatus = (typeof CAMPAIGN_STATUSES)[number];
export type CampaignAction = "start" | "schedule" | "pause" | "resume" | "cancel" | "complete" | "update";

const MOVES: Record<CampaignAction, Partial<Record<CampaignStatus, CampaignStatus>>> = {
  // start: from draft (or a scheduled one now, early); idempotent when already running
  start: { draft: "running", scheduled: "running", running: "running" },
  schedule: { draft: "scheduled" },
  pause: { running: "paused", paused: "paused" },
  resume: { paused: "running", running: "running" },
  cancel: { draft: "cancelled", scheduled: "cancelled", running: "cancelled", paused: "cancelled", cancelled: "cancelled" },
  complete: { running: "completed" },
  update: { draft: "draft" },
};

/** The state after `action`, or null when the action is not allowed from `from` (a 409). */
export function nextStatus(from: CampaignStatus, action: CampaignAction): CampaignStatus | null {
  return MOVES[action][from] ?? null;
}

export function allowedFrom(action: CampaignAction): CampaignStatus[] {
  return Object.keys(MOVES[action]) as CampaignStatus[];
}
