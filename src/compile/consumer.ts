import { ApiError } from "../platform/errors.ts";
import { cacheKey, type OutputInfo, outputInfo, readCache, writeCache } from "./cache.ts";
import { deliverCallback } from "./callbacks.ts";
import { type CompileInput, compileNamespace, isInfrastructureError, TRANSPORT_SLACK_MS } from "./compiler.ts";
import { cacheTtlSeconds, compilerFor } from "./config.ts";
import { claimJob, findJob, finishJob, jobInputKey, jobPdfKey, type JobOutcome, type JobRow, releaseJob, renewLease, takeStaleJobs } from "./jobs.ts";
import { COMPILE_LIMITS, MAX_JOB_ATTEMPTS } from "./limits.ts";
import { type CompileQueueMessage, isCompileQueueMessage } from "./messages.ts";
import { type CompileErrorInfo, FINAL_STATUSES, type JobStatus } from "./schemas.ts";

const isFinal = (s: JobStatus) => (FINAL_STATUSES as readonly string[]).includes(s);
import { sendAll } from "../platform/batching.ts";
import { log } from "../platform/log.ts";
import { directoryDb } from "../platform/shards.ts";

/** Seconds before retrying a job after an infrastructure failure, by attempt. */
const INFRA_RETRY_DELAYS = [2, 15, 60];

/** A lease long enough for the container transport's every try at the job's time limit. */
function leaseMs(input: CompileInput | null): number {
  return 3 * ((input?.timeoutMs ?? COMPILE_LIMITS.defaultTimeoutMs) + TRANSPORT_SLACK_MS) + 60_000;
}

async function loadInput(bucket: R2Bucket, job: JobRow): Promise<CompileInput | null> {
  const obj = await bucket.get(jobInputKey(job.accountId, job.id));
  return obj ? ((await obj.json()) as CompileInput) : null;
}

/**
 * Runs one async job to an outcome. Safe under duplicates, retries and crashes: only the consumer
 * whose claim moved the job to `running` (attempt n) can finish it, and only while it is still
 * attempt n; a crashed consumer's lease runs out and the cron re-queues the job; infrastructure
 * failures are retried MAX_JOB_ATTEMPTS times in all, then the job is `failed` with the reason.
 */
export async function runCompileJob(env: Env, msg: { jobId: string; accountId: string }): Promise<void> {
  const db = directoryDb(env);
  const job = await findJob(db, msg.jobId);
  if (!job || job.accountId !== msg.accountId || isFinal(job.status)) return;
  const input = await loadInput(env.FILES, job);
  const claimed = await claimJob(db, job.id, Date.now(), leaseMs(input));
  if (!claimed) return; // a live consumer holds it
  const attempt = claimed.attempt;
  const finish = (outcome: JobOutcome) => finishAndNotify(env, claimed, attempt, outcome);

  if (!input) return finish({ status: "failed", error: { code: "internal_error", message: "The job's input is missing." } });
  if (attempt > MAX_JOB_ATTEMPTS) return finish({ status: "failed", error: unavailableError(attempt - 1, "the compile did not finish") });

  const retryOrFail = async (reason: string) => {
    if (attempt >= MAX_JOB_ATTEMPTS) return finish({ status: "failed", error: unavailableError(attempt, reason) });
    const delaySeconds = INFRA_RETRY_DELAYS[attempt - 1] ?? 60;
    log.warn("compile job retry", { jobId: job.id, attempt, reason });
    if (await releaseJob(db, job.id, attempt, Date.now() + delaySeconds * 1000)) {
      await env.COMPILE_QUEUE.send({ kind: "compile", jobId: job.id, accountId: job.accountId } satisfies CompileQueueMessage, { contentType: "json", delaySeconds });
    }
  };

  let outcome: JobOutcome;
  try {
    const key = await cacheKey(job.accountId, input);
    const cached = await readCache(env.FILES, key);
    if (cached) {
      const pdf = await new Response(cached.body).arrayBuffer();
      if (!(await putPdf(env, claimed, pdf, attempt, outputInfo(cached)))) return;
      outcome = { status: "succeeded", durationMs: 0, pages: cached.pages, sizeBytes: pdf.byteLength };
    } else {
      const out = await compilerFor(env).compile(input, { namespace: await compileNamespace(job.accountId), jobId: job.id });
      if (!(await putPdf(env, claimed, out.pdf, attempt, outputInfo(out)))) return;
      await writeCache(env.FILES, key, out.pdf, { engine: out.engine, pages: out.pages, ttlSeconds: cacheTtlSeconds(env), output: outputInfo(out) }).catch((err) =>
        log.error("compile cache write failed", { error: String(err) }),
      );
      outcome = { status: "succeeded", durationMs: out.durationMs, pages: out.pages, sizeBytes: out.pdf.byteLength };
    }
  } catch (err) {
    // stopped by DELETE: the row already says so, and nothing of this attempt may change it
    if (err instanceof ApiError && err.code === "job_cancelled") return;
    // The document's own failure (LaTeX error, timeout, too large) is final; anything else
    // (compiler unavailable, R2 or D1 hiccup) is retried.
    if (!isInfrastructureError(err)) outcome = { status: "failed", error: (err as ApiError).toBody().error as CompileErrorInfo };
    else {
      log.error("compile job attempt failed", { jobId: job.id, attempt, error: String(err) });
      // Our own ApiError messages are written for users; raw exceptions are not shown.
      return retryOrFail(err instanceof ApiError ? err.message : "an internal error");
    }
  }
  return finish(outcome);
}

function unavailableError(attempts: number, reason: string) {
  return { code: "compile_unavailable", message: `The job could not be compiled in ${attempts} attempt(s) for reasons on our side: ${reason}` };
}

/** Stores the PDF (or the output asked for) if this attempt still holds the job; false when the lease was lost. */
async function putPdf(env: Env, job: JobRow, pdf: ArrayBuffer, attempt: number, info: OutputInfo): Promise<boolean> {
  if (!(await renewLease(directoryDb(env), job.id, attempt, Date.now(), 60_000))) {
    log.warn("compile job lease lost; result dropped", { jobId: job.id, attempt });
    return false;
  }
  const meta: Record<string, string> = { attempt: String(attempt) };
  if (info.outputPages) meta.outputPages = info.outputPages;
  if (info.errorCount) meta.errorCount = String(info.errorCount);
  await env.FILES.put(jobPdfKey(job.accountId, job.id), pdf, { httpMetadata: { contentType: info.contentType }, customMetadata: meta });
  return true;
}

async function finishAndNotify(env: Env, job: JobRow, attempt: number, outcome: JobOutcome): Promise<void> {
  const finished = await finishJob(directoryDb(env), job.id, attempt, outcome, Date.now());
  if (!finished) {
    log.warn("compile job lease lost; result dropped", { jobId: job.id, attempt });
    return;
  }
  await env.FILES.delete(jobInputKey(job.accountId, job.id));
  if (finished.callbackStatus === "pending") {
    // First attempt inline; its failures are retried from the queue (and the cron, if that send fails).
    await deliverCallback(env, job.id).catch((err) => log.error("compile callback error", { jobId: job.id, error: String(err) }));
  }
}

/** COMPILE_QUEUE consumer: messages of one batch run concurrently (each waits on the compiler). */
export async function handleCompileQueue(batch: MessageBatch<unknown>, env: Env, _ctx: ExecutionContext): Promise<void> {
  await Promise.all(
    batch.messages.map(async (msg) => {
      const body = msg.body;
      if (!isCompileQueueMessage(body)) {
        log.error("unknown compile queue message", { id: msg.id });
        msg.ack();
        return;
      }
      try {
        if (body.kind === "compile") await runCompileJob(env, body);
        else await deliverCallback(env, body.jobId);
        msg.ack();
      } catch (err) {
        log.error("compile queue message failed", { kind: body.kind, jobId: body.jobId, error: String(err) });
        msg.retry({ delaySeconds: 5 });
      }
    }),
  );
}

/** Cron: re-send messages of jobs that nothing is working on (lost message, crashed consumer, callback not sent). */
export async function onCronCompile(env: Env, now: number): Promise<void> {
  const stale = await takeStaleJobs(directoryDb(env), now);
  if (stale.length === 0) return;
  await sendAll(
    env.COMPILE_QUEUE,
    stale.map((j) => ({
      body: { kind: isFinal(j.status) ? "callback" : "compile", jobId: j.id, accountId: j.accountId } satisfies CompileQueueMessage,
      contentType: "json" as const,
    })),
  );
}
