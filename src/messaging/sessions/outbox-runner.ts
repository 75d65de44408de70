import { log } from "../../platform/log.ts";
import { ID_CHUNK } from "../store/reads.ts";
import { campaignHooks } from "./campaign-hooks.ts";
import type { Outbox } from "./outbox.ts";
import type { Sender } from "./sender.ts";

/** How long one alarm may work through the outbox before yielding to a fresh alarm. */
const ALARM_BUDGET_MS = 20_000;

/** What the runner needs of its Session DO. */
export interface RunnerHost {
  readonly env: Env;
  readonly outbox: Outbox;
  readonly sender: Sender;
  accountId(): string;
  /** Commits the session's buffered writes (campaigns count their recipients' states in D1). */
  commit(): Promise<void>;
}

/**
 * The alarm's share of a Session DO's work: scheduled campaign starts that fell due, then the
 * outbox's due sends in chunks within the alarm's budget, each chunk's campaigns told of their
 * progress. Kept apart from the DO so the DO stays its RPC surface and state machine.
 */
export class OutboxRunner {
  /** Outbox ids being sent right now (a cancel leaves them to finish). */
  readonly inFlight = new Set<string>();

  constructor(private readonly host: RunnerHost) {}

  async run(): Promise<void> {
    await this.fireCampaignTimers();
    const deadline = Date.now() + ALARM_BUDGET_MS;
    while (Date.now() < deadline) {
      if ((await this.processOutbox()) === 0) break;
    }
  }

  private async fireCampaignTimers(): Promise<void> {
    const { env, outbox } = this.host;
    for (const campaignId of outbox.dueTimers(Date.now())) {
      try {
        await campaignHooks().due(env, this.host.accountId(), campaignId);
        outbox.cancelTimer(campaignId);
      } catch (err) {
        // Kept: the next alarm (or the cron) tries again.
        log.error("scheduled campaign start failed", { campaignId, error: String(err) });
      }
    }
  }

  private async processOutbox(): Promise<number> {
    const { outbox, sender } = this.host;
    const now = Date.now();
    outbox.slipLate(now);
    if (sender.throttledUntil > now) return 0;
    const due = outbox.due(now, ID_CHUNK);
    if (due.length === 0) return 0;
    for (const r of due) this.inFlight.add(r.message_id);
    try {
      await sender.sendDue(due);
      return due.length;
    } finally {
      for (const r of due) this.inFlight.delete(r.message_id);
      await this.reportProgress(due.map((r) => r.campaign_id));
    }
  }

  private async reportProgress(campaignIds: Iterable<string | null>): Promise<void> {
    // Only a campaign with nothing left queued here can have completed (a job still claiming
    // recipients ends in a later chunk here): a commit and a check per chunk of a large campaign
    // cost more than its sends.
    const ids = [...new Set([...campaignIds].filter((id): id is string => !!id))].filter((id) => !this.host.outbox.hasQueued(id));
    if (ids.length === 0) return;
    // Campaigns count their recipients' states in D1: what this chunk changed is committed first.
    await this.host.commit();
    await campaignHooks().progressed(this.host.env, this.host.accountId(), ids).catch((err) => log.error("campaign progress hook failed", { error: String(err) }));
  }
}
