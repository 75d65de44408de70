import { phoneOfContactKey } from "../chat-id.ts";
import { newId } from "../../platform/ids.ts";
import { enqueueSendJobs, type JobOf } from "../queue/send-queue.ts";
import { sessionStub } from "../sessions/session-do.ts";
import type { StoredMedia } from "../messages/mapper.ts";
import { pacingOf, type CampaignRow } from "./mapper.ts";
import type { CampaignMessage } from "./schemas.ts";
import { renderTemplate } from "./template.ts";
import { campaignBlocksToSend, claimCampaignMessagesStatements, queuedCampaignMessageIds } from "../store/campaigns.ts";
import { accountShard, type Shard } from "../../platform/shards.ts";

/**
 * Recipients per SEND_QUEUE job. A job's cost is mostly per job (its queue message, five D1 round
 * trips, a call to the session's object), so large jobs keep a large campaign's cost per recipient
 * low; its rows travel as JSON (no bound-parameter limit) and one job is well under a second of work.
 */
export const JOB_SIZE = 1000;
/** Message ids of a job: a time-ordered base plus the recipient's seq in this many digits. */
const SEQ_DIGITS = 7;

/** Recipients `from` .. `to` (seqs, inclusive) of one campaign. */
export type CampaignJob = JobOf<"campaign", { accountId: string; campaignId: string; from: number; to: number }>;

/** Puts jobs for the given blocks of JOB_SIZE recipients (block b = seqs b*JOB_SIZE+1 .. (b+1)*JOB_SIZE). */
export async function enqueueBlocks(env: Env, c: Pick<CampaignRow, "id" | "accountId">, blocks: number[]): Promise<void> {
  const jobs: CampaignJob[] = blocks.map((b) => ({ kind: "campaign", accountId: c.accountId, campaignId: c.id, from: b * JOB_SIZE + 1, to: (b + 1) * JOB_SIZE }));
  await enqueueSendJobs(env, jobs);
}

export function allBlocks(total: number): number[] {
  return Array.from({ length: Math.ceil(total / JOB_SIZE) }, (_, b) => b);
}

/**
 * Blocks that still have recipients to send: not yet claimed, or (unless `unclaimedOnly`) claimed
 * with the message unsent.
 */
export function remainingBlocks(shard: Shard, campaignId: string, opts: { unclaimedOnly?: boolean } = {}): Promise<number[]> {
  return campaignBlocksToSend(shard, campaignId, JOB_SIZE, opts.unclaimedOnly ?? false);
}

interface PendingRecipient {
  seq: number;
  phone: string;
  name: string | null;
  email: string | null;
  attributes: string;
}

function contentOf(message: CampaignMessage, r: PendingRecipient): { text: string | null; media: StoredMedia | null } {
  const contact = { name: r.name, phone: phoneOfContactKey(r.phone), email: r.email, attributes: JSON.parse(r.attributes) as Record<string, unknown> };
  if ("text" in message) return { text: renderTemplate(message.text, contact), media: null };
  if ("media" in message) {
    const media: StoredMedia = {
      url: message.media.url,
      mimetype: null,
      filename: message.filename ?? null,
      caption: message.caption ? renderTemplate(message.caption, contact) : null,
      size: null,
      mediaId: null,
      origin: null,
    };
    return { text: null, media };
  }
  return { text: null, media: null };
}

/**
 * One SEND_QUEUE job: claims the job's pending recipients and hands their messages to the session's
 * DO. The claim is one D1 transaction: each message is inserted only while its recipient is still
 * `pending`, and the same transaction marks it `queued` with that message id, so a retried or
 * duplicated job (or one racing a cancel) can never create a second message for a recipient. Then
 * every queued-but-unsent message of the range goes to the DO, whose outbox ignores ids it already
 * has and sends only messages still `pending`: a recipient is sent at most once.
 */
export async function runCampaignJob(env: Env, job: CampaignJob): Promise<void> {
  const shard = await accountShard(env, job.accountId);
  const c = await shard.d1.prepare("SELECT * FROM campaigns WHERE id = ? AND account_id = ?").bind(job.campaignId, job.accountId).first<Record<string, unknown>>();
  // Paused or cancelled: nothing to do (resume enqueues what is left).
  if (!c || c.status !== "running") return;
  const campaign = {
    id: c.id as string,
    accountId: c.account_id as string,
    sessionId: c.session_id as string,
    message: JSON.parse(c.message as string) as CampaignMessage,
    pacing: pacingOf({ pacing: c.pacing } as CampaignRow),
  };
  const pending = (
    await shard.d1.prepare("SELECT seq, phone, name, email, attributes FROM campaign_recipients WHERE campaign_id = ? AND seq BETWEEN ? AND ? AND status = 'pending' ORDER BY seq")
      .bind(campaign.id, job.from, job.to)
      .all<PendingRecipient>()
  ).results;
  if (pending.length > 0) await claim(shard, campaign, pending);

  const queued = await queuedCampaignMessageIds(shard, campaign.id, job.from, job.to);
  if (queued.length === 0) return;
  await sessionStub(env, campaign.sessionId).enqueue(queued, {
    campaignId: campaign.id,
    ...(campaign.pacing ? { perMinute: campaign.pacing.perMinute, jitterPct: campaign.pacing.jitterPct } : {}),
  });
}

async function claim(
  shard: Shard,
  c: { id: string; accountId: string; sessionId: string; message: CampaignMessage },
  pending: PendingRecipient[],
): Promise<void> {
  const now = Date.now();
  const base = newId("msg", now).slice(0, -SEQ_DIGITS);
  const m = c.message;
  const type = "text" in m ? "text" : "template" in m ? "template" : "location" in m ? "location" : "contacts" in m ? "contacts" : "interactive" in m ? "interactive" : m.type;
  const template = "template" in m ? m.template : null;
  const content = "location" in m ? { location: m.location } : "contacts" in m ? { contacts: m.contacts } : "interactive" in m ? { interactive: m.interactive } : null;
  const statements = claimCampaignMessagesStatements(
    shard,
    { idBase: base, seqDigits: SEQ_DIGITS, accountId: c.accountId, sessionId: c.sessionId, campaignId: c.id, type, template, content, createdAt: now },
    pending.map((r) => ({ seq: r.seq, ...contentOf(c.message, r) })),
  );
  // Every row still pending in [first, last] was read above, so it got its message just now.
  statements.push(
    shard.d1.prepare(
      `UPDATE campaign_recipients SET status = 'queued', message_id = ?1 || printf('%0${SEQ_DIGITS}d', seq)
        WHERE campaign_id = ?2 AND seq BETWEEN ?3 AND ?4 AND status = 'pending'`,
    ).bind(base, c.id, pending[0]!.seq, pending.at(-1)!.seq),
  );
  await shard.d1.batch(statements);
}
