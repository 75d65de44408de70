import { sendAll } from "../../platform/batching.ts";
import { log } from "../../platform/log.ts";

/**
 * The sends queue (SEND_QUEUE) carries jobs of several kinds: `bulk` (sessions/jobs.ts, jobs of an
 * earlier version) hands message ids to the session's Durable Object; `campaign` (campaigns) claims a range of recipients; `media` (sessions/jobs.ts) stores an
 * inbound message's file. The
 * entry point (src/queues.ts) wires a handler to every kind.
 */
export const SEND_JOB_KINDS = ["bulk", "campaign", "media"] as const;
export type SendJobKind = (typeof SEND_JOB_KINDS)[number];

export interface SendJob {
  kind: SendJobKind;
  [key: string]: unknown;
}

/** A job of one kind with its own fields. */
export type JobOf<K extends SendJobKind, Fields> = SendJob & { kind: K } & Fields;

export type SendJobHandler = (job: SendJob, env: Env) => Promise<void>;
export type SendJobHandlers = Readonly<Record<SendJobKind, SendJobHandler>>;

/** Puts jobs on SEND_QUEUE. */
export async function enqueueSendJobs(env: Env, jobs: SendJob[]): Promise<void> {
  await sendAll(env.SEND_QUEUE, jobs.map((body) => ({ body, contentType: "json" as const })));
}

/** The SEND_QUEUE consumer over the given handlers; throws at wiring time if a kind has none. */
export function sendQueueConsumer(handlers: SendJobHandlers): (batch: MessageBatch<unknown>, env: Env) => Promise<void> {
  const missing = SEND_JOB_KINDS.filter((kind) => typeof handlers[kind] !== "function");
  if (missing.length) throw new Error(`SEND_QUEUE: no handler for job kind(s) ${missing.join(", ")}`);
  const byKind = new Map<string, SendJobHandler>(Object.entries(handlers));
  return (batch, env) => handleSendQueue(byKind, batch, env);
}

async function handleSendQueue(handlers: Map<string, SendJobHandler>, batch: MessageBatch<unknown>, env: Env): Promise<void> {
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
