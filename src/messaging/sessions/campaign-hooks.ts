import type { SessionStatus } from "./schemas.ts";

/**
 * What the Session DO tells the campaigns module, registered by it at load time so the
 * messaging core does not import campaigns. All optional: without campaigns the DO works as before.
 */
export interface CampaignHooks {
  /** Campaign messages of this session reached a final state (sent or failed): check completion. */
  progressed(env: Env, campaignIds: string[]): Promise<void>;
  /**
   * The session is not WORKING (it left WORKING, or campaign messages came due while it was not):
   * pause the session's running campaigns (or the given ones) with a reason; answers the ids paused.
   */
  interrupted(env: Env, sessionId: string, status: SessionStatus, reason: string | null, campaignIds?: string[]): Promise<string[]>;
  /** A scheduled start the DO's alarm kept for this campaign is due. */
  due(env: Env, campaignId: string): Promise<void>;
}

let hooks: CampaignHooks | null = null;

export function setCampaignHooks(h: CampaignHooks): void {
  hooks = h;
}

export function campaignHooks(): CampaignHooks | null {
  return hooks;
}

/** Per-campaign pacing of queued sends; omitted = the session's own rate. */
export interface EnqueueOptions {
  campaignId?: string;
  perMinute?: number | null;
  jitterPct?: number;
}
