import { sessionStub } from "../sessions/service.ts";
import { sendAll } from "../../platform/batching.ts";
import { log } from "../../platform/log.ts";

/**
 * The sends queue (SEND_QUEUE) carries jobs of several kinds; each module registers the kinds it
 * handles. `bulk` (this module) hands message ids to the session's Durable Object; campaigns
 * register their own kind.
 */
export interface SendJob {
  kind: string;
  [key: string]: unknown;
}

export type SendJobHandler = (job: SendJob, env: Env) => Promise<void>;

const handlers = new Map<string, SendJobHandler>();

export function registerSendJob(kind: string, handler: SendJobHandler): void {
  handlers.set(kind, handler);
}

/** Puts jobs on SEND_QUEUE. */
export async function enqueueSendJobs(env: Env, jobs: SendJob[]): Promise<void> {
  await sendAll(env.SEND_QUEUE, jobs.map((body) => ({ body, contentType: "json" as const })));
}

export interface BulkJob extends SendJob {
  kind: "bulk";
  accountId: string;
  sessionId: string;
  messageIds: string[];
}

registerSendJob("bulk", async (job, env) => {
  const { sessionId, messageIds } = job as BulkJob;
  await sessionStub(env, sessionId).enqueue(messageIds);
});

export async function handleSendQueue(batch: MessageBatch<unknown>, env: Env): Promise<void> {
  for (const msg of batch.messages) {
    const job = msg.body as SendJob | null;
    const handler = job && typeof job.kind === "string" ? handlers.get(job.kind) : undefined;
    if (!handler) {
      log.error("unknown send job kind", { kind: job?.kind ?? null });
      msg.retry({ delaySeconds: 60 });
      continue;
    }
    try {
      await handler(job!, env);
      msg.ack();
    } catch (err) {
      log.error("send job failed", { kind: job!.kind, error: String(err) });
      msg.retry({ delaySeconds: 5 });
    }
  }
}
