import { MAX_QUEUE_DELAY_SECONDS, retrySchedule as webhookRetrySchedule } from "../events/config.ts";
import { decideOutcome } from "../events/retry-policy.ts";
import { sendAttempt } from "../events/send-attempt.ts";
import { checkTargetUrl } from "../platform/safe-url.ts";
import { claimCallback, findJob, settleCallback } from "./jobs.ts";
import { toJobView } from "./mapper.ts";
import type { CompileQueueMessage } from "./messages.ts";
import { log } from "../platform/log.ts";
import { config } from "../platform/config.ts";
import { directoryDb } from "../platform/shards.ts";

const CALLBACK_TIMEOUT_MS = 10_000;
/** Seconds before each retry: the webhooks' schedule (WEBHOOK_RETRY_SCHEDULE), capped at the queue's longest delay. */
export function retrySchedule(env: Env): number[] {
  return webhookRetrySchedule(env).map((n) => Math.min(Math.round(n), MAX_QUEUE_DELAY_SECONDS));
}

/** The callback body: Standard Webhooks' envelope around the final job record. */
export function callbackPayload(job: ReturnType<typeof toJobView>, now: number): string {
  return JSON.stringify({ type: `compile.job.${job.status}`, timestamp: new Date(now).toISOString(), data: job });
}

/** The id a receiver deduplicates on: one per job, the same on every retry. */
export const callbackMessageId = (jobId: string) => `cb_${jobId}`;

/**
 * One delivery attempt of a finished job's callback: POST the job record signed with the job's
 * callbackSecret (webhook-id / webhook-timestamp / webhook-signature). Non-2xx, redirects and
 * timeouts are failures, retried on the webhooks' schedule by a delayed COMPILE_QUEUE message; after
 * the last one (or a 410) the callback is `failed`. The attempt is claimed first, so duplicate messages do not
 * deliver the same attempt twice.
 */
export async function deliverCallback(env: Env, jobId: string, now = Date.now()): Promise<void> {
  const db = directoryDb(env);
  const job = await findJob(db, jobId);
  if (!job || job.callbackStatus !== "pending" || !job.callbackUrl || !job.callbackSecret) return;
  if (!(await claimCallback(db, job.id, job.callbackAttempts, now, CALLBACK_TIMEOUT_MS * 6))) return;
  const attempt = job.callbackAttempts + 1;

  const check = checkTargetUrl(job.callbackUrl, { allowLoopback: config(env).allowLoopbackUrls });
  if (!check.ok) return settleCallback(db, job.id, { status: "failed" });

  const body = callbackPayload(toJobView(job), now);
  // The webhooks' signed sender and retry policy: 2xx delivers; 410 or the last attempt fails it.
  const result = await sendAttempt({ url: check.url.href, secrets: [job.callbackSecret], messageId: callbackMessageId(job.id), body, timeoutMs: CALLBACK_TIMEOUT_MS });
  const outcome = decideOutcome(attempt, result, retrySchedule(env));
  if (outcome.status === "succeeded") return settleCallback(db, job.id, { status: "delivered" });
  log.warn("compile callback failed", { jobId: job.id, attempt, status: result.statusCode ?? result.error });
  if (outcome.status === "failed") return settleCallback(db, job.id, { status: "failed" });
  const delaySeconds = Math.min(outcome.delaySeconds, MAX_QUEUE_DELAY_SECONDS);
  await settleCallback(db, job.id, { status: "pending", retryAt: now + delaySeconds * 1000 });
  await env.COMPILE_QUEUE.send({ kind: "callback", jobId: job.id, accountId: job.accountId } satisfies CompileQueueMessage, { contentType: "json", delaySeconds });
}
