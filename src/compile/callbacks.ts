import { getDb } from "../db/client.ts";
import { signedHeaders } from "../events/signing.ts";
import { checkTargetUrl } from "../platform/safe-url.ts";
import { claimCallback, findJob, settleCallback, toJobView } from "./jobs.ts";
import type { CompileQueueMessage } from "./messages.ts";

const CALLBACK_TIMEOUT_MS = 10_000;
const DEFAULT_SCHEDULE = [5, 300, 1800, 7200, 18000, 36000, 36000];
/** Queues cannot delay a message longer than 12 hours. */
const MAX_DELAY_SECONDS = 12 * 60 * 60;

/** Seconds before each retry (docs/contracts.md §4; WEBHOOK_RETRY_SCHEDULE overrides it, as for webhooks). */
export function retrySchedule(env: Env): number[] {
  const parsed = (env.WEBHOOK_RETRY_SCHEDULE ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "")
    .map(Number)
    .filter((n) => Number.isFinite(n) && n >= 0);
  return (parsed.length > 0 ? parsed : DEFAULT_SCHEDULE).map((n) => Math.min(Math.round(n), MAX_DELAY_SECONDS));
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
 * timeouts are failures, retried on the schedule by a delayed COMPILE_QUEUE message; after the
 * last one the callback is `failed`. The attempt is claimed first, so duplicate messages do not
 * deliver the same attempt twice.
 */
export async function deliverCallback(env: Env, jobId: string, now = Date.now()): Promise<void> {
  const db = getDb(env.DB);
  const job = await findJob(db, jobId);
  if (!job || job.callbackStatus !== "pending" || !job.callbackUrl || !job.callbackSecret) return;
  if (!(await claimCallback(db, job.id, job.callbackAttempts, now, CALLBACK_TIMEOUT_MS * 6))) return;
  const attempt = job.callbackAttempts + 1;

  const check = checkTargetUrl(job.callbackUrl, { allowLoopback: env.WEBHOOK_ALLOW_LOOPBACK === "1" });
  if (!check.ok) return settleCallback(db, job.id, { status: "failed" });

  const body = callbackPayload(toJobView(job), now);
  const headers = await signedHeaders([job.callbackSecret], callbackMessageId(job.id), body, now);
  let ok = false;
  let status: number | string = "";
  try {
    const res = await fetch(check.url, { method: "POST", headers, body, redirect: "manual", signal: AbortSignal.timeout(CALLBACK_TIMEOUT_MS) });
    ok = res.status >= 200 && res.status < 300;
    status = res.status;
    await res.body?.cancel();
  } catch (err) {
    status = String(err);
  }
  if (ok) return settleCallback(db, job.id, { status: "delivered" });

  const schedule = retrySchedule(env);
  console.warn(JSON.stringify({ level: "warn", msg: "compile callback failed", jobId: job.id, attempt, status }));
  if (attempt > schedule.length) return settleCallback(db, job.id, { status: "failed" });
  const delaySeconds = schedule[attempt - 1]!;
  await settleCallback(db, job.id, { status: "pending", retryAt: now + delaySeconds * 1000 });
  await env.COMPILE_QUEUE.send({ kind: "callback", jobId: job.id, accountId: job.accountId } satisfies CompileQueueMessage, { contentType: "json", delaySeconds });
}
