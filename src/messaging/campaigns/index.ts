import { createRouter } from "../../platform/openapi.ts";
import { registerSendJob } from "../queue/send-queue.ts";
import { setCampaignHooks } from "../sessions/campaign-hooks.ts";
import { announceMissedCompletions, maybeComplete } from "./completion.ts";
import { runCampaignJob, type CampaignJob } from "./fanout.ts";
import { mountCampaigns } from "./handlers.ts";
import { kickStalled, pauseForSession, startDue, startDueScheduled } from "./service.ts";

/** /api/campaigns routes. */
export const campaignRoutes = createRouter();
mountCampaigns(campaignRoutes);

registerSendJob("campaign", (job, env) => runCampaignJob(env, job as CampaignJob));

setCampaignHooks({
  async progressed(env, campaignIds) {
    for (const id of campaignIds) await maybeComplete(env, id);
  },
  interrupted: pauseForSession,
  due: (env, campaignId) => startDue(env, campaignId, Date.now(), { fromTimer: true }),
});

/** Every minute: start due scheduled campaigns (backstop of the DO alarm), re-kick stalled ones, announce missed completions. */
export async function onCronCampaigns(env: Env, now: number): Promise<void> {
  await startDueScheduled(env, now);
  await kickStalled(env, now);
  await announceMissedCompletions(env, now);
}
