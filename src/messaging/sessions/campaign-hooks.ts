import type { SessionStatus } from "./schemas.ts";

/**
 * What the Session DO tells the campaigns module. The entry point wires the campaigns' implementation
 * into the DO (src/index.ts), so the messaging core does not import campaigns.
 */
export interface CampaignHooks {
  /** Campaign messages of this session reached a final state (sent or failed): check completion. */
  progressed(env: Env, accountId: string, campaignIds: string[]): Promise<void>;
  /**
   * The session is not WORKING (it left WORKING, or campaign messages came due while it was not):
   * pause the session's running campaigns (or the given ones) with a reason; answers the ids paused.
   */
  interrupted(env: Env, accountId: string, sessionId: string, status: SessionStatus, reason: string | null, campaignIds?: string[]): Promise<string[]>;
  /** A scheduled start the DO's alarm kept for this campaign is due. */
  due(env: Env, accountId: string, campaignId: string): Promise<void>;
}

let wired: CampaignHooks | null = null;

/** Wires the campaigns' hooks into the Session DO: called once by the Worker's entry point (src/index.ts). */
export function wireCampaignHooks(hooks: CampaignHooks): void {
  wired = hooks;
}

/** The wired hooks; throws when the entry point did not wire them (a DO that cannot pause campaigns must not run). */
export function campaignHooks(): CampaignHooks {
  if (!wired) throw new Error("SessionDO: campaign hooks are not wired (src/index.ts calls wireCampaignHooks)");
  return wired;
}

/** Per-campaign pacing of queued sends; omitted = the session's own rate. */
export interface EnqueueOptions {
  campaignId?: string;
  perMinute?: number | null;
  jitterPct?: number;
}
