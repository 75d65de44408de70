import type { SendJobHandler } from "../queue/send-queue.ts";
import { accountShard, eachShard } from "../../platform/shards.ts";
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
  async progressed(env, accountId, campaignIds) {
    const shard = await accountShard(env, accountId);
    for (const id of campaignIds) await maybeComplete(env, shard, id);
  },
  interrupted: pauseForSession,
  due: async (env, accountId, campaignId) => startDue(env, await accountShard(env, accountId), campaignId, Date.now(), { fromTimer: true }),
};

/** Every minute, shard by shard: start due scheduled campaigns (backstop of the DO alarm), re-kick stalled ones, announce missed completions. */
export async function onCronCampaigns(env: Env, now: number): Promise<void> {
  await eachShard(env, "campaigns", async (shard) => {
    await startDueScheduled(env, shard, now);
    await kickStalled(env, shard, now);
    await announceMissedCompletions(env, shard, now);
  });
}
