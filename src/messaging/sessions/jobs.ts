import { log } from "../../platform/log.ts";
import { MAX_ATTEMPTS, type MediaJob } from "../media/inbound.ts";
import type { JobOf, SendJobHandler } from "../queue/send-queue.ts";
import { sessionStub } from "./session-do.ts";

/** The jobs of SEND_QUEUE that a session's Durable Object runs (src/queues.ts wires them). */

export type BulkJob = JobOf<"bulk", { accountId: string; sessionId: string; messageIds: string[] }>;

/**
 * `bulk`: hands a batch's message ids (rows already in D1) to the session's outbox. Bulk sends now
 * go to the session directly (`SessionDO.queueBulk`); jobs queued by an earlier version still run.
 */
export const runBulkJob: SendJobHandler = async (job, env) => {
  const { sessionId, messageIds } = job as BulkJob;
  await sessionStub(env, sessionId).enqueue(messageIds);
};

/** Backoff between attempts: 2, 4, 8, 16 s. */
const delayOf = (attempt: number) => 2 ** attempt;

/** `media`: one attempt at storing an inbound file, then a delayed retry while the failure is transient. */
export const runMediaJob: SendJobHandler = async (job, env) => {
  const { sessionId, messageId, attempt } = job as MediaJob;
  const outcome = await sessionStub(env, sessionId).fetchMedia(messageId, attempt >= MAX_ATTEMPTS);
  if (outcome.ok || !outcome.transient || attempt >= MAX_ATTEMPTS) {
    if (!outcome.ok) log.warn("inbound media not stored", { sessionId, messageId, attempt, reason: outcome.reason });
    return;
  }
  await env.SEND_QUEUE.send({ ...(job as MediaJob), attempt: attempt + 1 } satisfies MediaJob, { contentType: "json", delaySeconds: delayOf(attempt) });
};
