import type { SendJobHandler } from "../queue/send-queue.ts";
import type { CampaignHooks } from "../sessions/campaign-hooks.ts";
import { announceMissedCompletions, maybeComplete } from "./completion.ts";
import { runCampaignJob, type CampaignJob } from "./fanout.ts";
import { kickStalled, pauseForSession, startDue, startDueScheduled } from "./service.ts";

/** /api/campaigns routes. */
export { campaignRoutes } from "./router.ts";

/** The `campaign` kind of SEND_QUEUE jobs (wired in src/queues.ts). */
export const runCampaignSendJob: SendJobHandler = (job, env) => runCampaignJob(env, job as CampaignJob);

/** What the Session DO tells campaigns (wired into the DO in src/index.ts). */
export const campaignHooks: CampaignHooks = {
  async progressed(env, campaignIds) {
    for (const id of campaignIds) await maybeComplete(env, id);
  },
  interrupted: pauseForSession,
  due: (env, campaignId) => startDue(env, campaignId, Date.now(), { fromTimer: true }),
};

/** Every minute: start due scheduled campaigns (backstop of the DO alarm), re-kick stalled ones, announce missed completions. */
export async function onCronCampaigns(env: Env, now: number): Promise<void> {
  await startDueScheduled(env, now);
  await kickStalled(env, now);
  await announceMissedCompletions(env, now);
}
