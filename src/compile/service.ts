import { newWebhookSecret } from "../events/signing.ts";
import { errors } from "../platform/errors.ts";
import { newId } from "../platform/ids.ts";
import { checkTargetUrl } from "../platform/safe-url.ts";
import { INERT_HEADERS } from "../platform/inert-content.ts";
import { cacheKey, type OutputInfo, outputInfo, readCache, writeCache } from "./cache.ts";
import { type CompileInput, compileNamespace } from "./compiler.ts";
import { cacheTtlSeconds, compilerFor } from "./config.ts";
import { checkCompileLimits } from "./input.ts";
import { cancelJob, deleteJob, getJob, insertJob, jobInputKey, jobPath, jobPdfKey, listJobs, REQUEUE_AFTER_MS } from "./jobs.ts";
import { toJobView } from "./mapper.ts";
import { ApiError } from "../platform/errors.ts";
import { decodeCursor, IdCursor, toPage, type Page } from "../platform/pagination.ts";
import type { CompileQueueMessage } from "./messages.ts";
import { withAssets } from "./assets/resolve.ts";
import { type AsyncCompileRequest, type CompileFile, type CompileJob, type CompileRequest, DEFAULT_MAIN_PATH, type Engine, type JobStatus } from "./schemas.ts";
import { log } from "../platform/log.ts";
import { config } from "../platform/config.ts";
import { directoryDb } from "../platform/shards.ts";

export type SyncResult = OutputInfo & {
  body: ReadableStream | ArrayBuffer;
  size: number;
  etag: string;
  cache: "HIT" | "MISS";
  engine: Engine;
  durationMs: number;
  pages: number | null;
  preamble: "hit" | "miss" | null;
  /** The latexmkrc settings the compile server ignored (percent-encoded); a cached PDF has none. */
  projectWarnings?: string | undefined;
  timing: Record<string, number>;
};

/** A compile request whose assets were swapped for their bytes (assets/resolve.ts). */
type Resolved<T> = Omit<T, "files"> & { files?: CompileFile[] | undefined };

export function toInput(body: Resolved<CompileRequest>): CompileInput {
  const input: CompileInput = { engine: body.engine, source: body.source, files: body.files, timeoutMs: body.timeoutMs };
  if (body.mainPath !== undefined && body.mainPath !== DEFAULT_MAIN_PATH) input.mainPath = body.mainPath;
  if (body.draft) input.draft = true;
  if (body.shellEscape) input.shellEscape = true;
  // the defaults are left out: a PDF's input (and cache key) is as it was before these fields
  if (body.output !== undefined && body.output !== "pdf") input.output = body.output;
  for (const k of ["dpi", "firstPage", "lastPage"] as const) if (body[k] !== undefined) input[k] = body[k];
  if (body.synctex) input.synctex = true;
  if (body.haltOnError === false) input.haltOnError = false;
  return input;
}

/** The R2 copy of a sync result is written this long after the response is handed back. */
const CACHE_WRITE_DELAY_MS = 50;

/**
 * Sync compile: the account's cached PDF when there is one, otherwise the compiler's. The cache is
 * written after the response (waitUntil), so it adds no latency to a MISS.
 */
export async function compileSync(env: Env, ctx: Pick<ExecutionContext, "waitUntil">, accountId: string, body: CompileRequest): Promise<SyncResult> {
  const input = toInput(await withAssets(env, accountId, body));
  checkCompileLimits(input);
  const key = await cacheKey(accountId, input);
  // Server-Timing: the cache lookup and the compiler round trip.
  const t0 = Date.now();
  const hit = await readCache(env.FILES, key);
  const t1 = Date.now();
  if (hit) return { ...outputInfo(hit), body: hit.body, size: hit.size, etag: key, cache: "HIT", engine: hit.engine ?? input.engine, durationMs: 0, pages: hit.pages, preamble: null, timing: { cache: t1 - t0 } };

  const out = await compilerFor(env).compile(input, { namespace: await compileNamespace(accountId) });
  const t2 = Date.now();
  ctx.waitUntil(
    writeCache(env.FILES, key, out.pdf, { engine: out.engine, pages: out.pages, ttlSeconds: cacheTtlSeconds(env), delayMs: CACHE_WRITE_DELAY_MS, output: outputInfo(out) }).catch((err) =>
      log.error("compile cache write failed", { error: String(err) }),
    ),
  );
  return { ...outputInfo(out), body: out.pdf, size: out.pdf.byteLength, etag: key, cache: "MISS", engine: out.engine, durationMs: out.durationMs, pages: out.pages, preamble: out.preamble, projectWarnings: out.projectWarnings, timing: { cache: t1 - t0, compile: t2 - t1 } };
}

/**
 * Async submit: the input goes to R2 (it can be megabytes; queue messages and D1 rows cannot), the
 * job row to D1, then a message to COMPILE_QUEUE. If the queue refuses, the job is removed and the
 * client gets 503 (nothing was accepted).
 */
export async function submitJob(env: Env, accountId: string, body: AsyncCompileRequest, now = Date.now()): Promise<CompileJob & { callbackSecret?: string }> {
  const { callbackUrl, ...rest } = body;
  // assets are read now: the job compiles the bytes named at submission, whatever happens to them later
  const input = toInput(await withAssets(env, accountId, rest, now));
  checkCompileLimits(input);
  if (callbackUrl !== undefined) {
    const check = checkTargetUrl(callbackUrl, { allowLoopback: config(env).allowLoopbackUrls });
    if (!check.ok) throw errors.invalidRequest(`callbackUrl ${check.reason}.`, [{ path: "callbackUrl", message: check.reason }]);
  }
  const id = newId("job", now);
  const callbackSecret = callbackUrl !== undefined ? newWebhookSecret() : undefined;
  const db = directoryDb(env);
  await env.FILES.put(jobInputKey(accountId, id), JSON.stringify(input), { httpMetadata: { contentType: "application/json" } });
  const row = await insertJob(db, {
    id,
    accountId,
    status: "queued",
    engine: input.engine,
    requeueAt: now + REQUEUE_AFTER_MS,
    createdAt: now,
    callbackUrl: callbackUrl ?? null,
    callbackSecret: callbackSecret ?? null,
  });
  try {
    await env.COMPILE_QUEUE.send({ kind: "compile", jobId: id, accountId } satisfies CompileQueueMessage, { contentType: "json" });
  } catch (err) {
    log.error("compile queue send failed", { error: String(err) });
    await deleteJob(db, id);
    await env.FILES.delete(jobInputKey(accountId, id));
    throw errors.unavailable("The job queue is unavailable. Retry shortly.", 5);
  }
  return { ...toJobView(row), ...(callbackSecret ? { callbackSecret } : {}) };
}

export async function getJobView(env: Env, accountId: string, id: string): Promise<CompileJob> {
  return toJobView(await getJob(directoryDb(env), accountId, id));
}

export async function listJobViews(env: Env, accountId: string, q: { limit: number; cursor?: string; status?: JobStatus }): Promise<Page<CompileJob>> {
  const after = decodeCursor(q.cursor, IdCursor);
  const rows = await listJobs(directoryDb(env), accountId, q.limit, after?.id, q.status);
  const page = toPage(rows, q.limit, (r) => ({ id: r.id }));
  return { data: page.data.map(toJobView), nextCursor: page.nextCursor };
}

/** File name extensions of the stored outputs, by type. */
const EXTENSIONS: Record<string, string> = { "application/pdf": "pdf", "image/png": "png", "image/svg+xml": "svg", "text/plain; charset=utf-8": "log", "application/zip": "zip" };

/**
 * A succeeded job's result with its download headers; 409 for a failed job, 404 before success or
 * once expired. `pdfOnly` (GET …/pdf): a job that asked for another output is a 409 naming its outputUrl.
 */
export async function jobPdf(env: Env, accountId: string, id: string, pdfOnly = true): Promise<{ body: ReadableStream; headers: Record<string, string> }> {
  const row = await getJob(directoryDb(env), accountId, id);
  if (row.status === "cancelled") throw new ApiError(409, "job_cancelled", "This job was cancelled, so it has no PDF.", { status: row.status });
  if (row.status === "failed") throw new ApiError(409, "job_failed", "This job failed, so it has no PDF; its `error` says why.", { status: row.status });
  if (row.status !== "succeeded") throw new ApiError(404, "pdf_not_ready", `The job is ${row.status}; its PDF exists once it has succeeded.`, { status: row.status });
  const obj = await env.FILES.get(jobPdfKey(row.accountId, row.id));
  if (!obj) throw new ApiError(404, "pdf_expired", "This job's PDF is no longer stored.");
  const type = obj.httpMetadata?.contentType ?? "application/pdf";
  if (pdfOnly && type !== "application/pdf") {
    await obj.body.cancel();
    throw new ApiError(409, "not_a_pdf", `This job asked for another output than the PDF (${type}): download it from outputUrl.`, { outputUrl: `${jobPath(row.id)}/output` });
  }
  const info = infoOfJob(obj.customMetadata ?? {});
  return {
    body: obj.body,
    headers: {
      "Content-Type": type,
      "Content-Length": String(obj.size),
      "Content-Disposition": `attachment; filename="${row.id}.${EXTENSIONS[type] ?? "bin"}"`,
      ...(info.outputPages ? { "X-Output-Pages": info.outputPages } : {}),
      ...(info.errorCount ? { "X-Compile-Errors": String(info.errorCount) } : {}),
      ETag: obj.httpEtag,
      "Cache-Control": "private, max-age=3600",
      // A user's LaTeX chose what the PDF holds (PDF JavaScript included): never run on our origin.
      ...INERT_HEADERS,
    },
  };
}

/** What a stored job result says of its output (consumer.ts writes it). */
function infoOfJob(meta: Record<string, string>): { outputPages?: string; errorCount?: number } {
  return { ...(meta.outputPages ? { outputPages: meta.outputPages } : {}), ...(Number(meta.errorCount) > 0 ? { errorCount: Number(meta.errorCount) } : {}) };
}

/** The headers of a synchronous compile's answer (the PDF, or the output asked for). */
export function syncPdfHeaders(r: SyncResult): Record<string, string> {
  const headers: Record<string, string> = {
    "Content-Type": r.contentType,
    "Content-Length": String(r.size),
    ETag: `"${r.etag}"`,
    "X-Cache": r.cache,
    "X-Compile-Duration-Ms": String(r.durationMs),
    "X-Engine": r.engine,
    "Cache-Control": "private, no-store",
    ...INERT_HEADERS,
  };
  if (r.pages !== null) headers["X-Compile-Pages"] = String(r.pages);
  if (r.preamble !== null) headers["X-Compile-Preamble"] = r.preamble;
  if (r.projectWarnings) headers["X-Compile-Project-Warnings"] = r.projectWarnings;
  if (r.outputPages) headers["X-Output-Pages"] = r.outputPages;
  if (r.errorCount) headers["X-Compile-Errors"] = String(r.errorCount);
  return headers;
}

// ---- Stopping a job ----

/**
 * DELETE /v1/compile/jobs/{id}: the row becomes `cancelled` first (which alone keeps a queued job
 * from running and a running one from storing a result), then the compile server stops the job if
 * it has it, or refuses it should it arrive. A repeat answers the cancelled job; a finished job is a 409.
 */
export async function cancelJobView(env: Env, ctx: Pick<ExecutionContext, "waitUntil">, accountId: string, id: string): Promise<CompileJob> {
  const db = directoryDb(env);
  const row = await cancelJob(db, accountId, id, Date.now());
  if (!row) {
    const job = await getJob(db, accountId, id); // another account's: 404
    if (job.status === "cancelled") return toJobView(job);
    throw new ApiError(409, "job_finished", `The job has ${job.status}; only a queued or running job can be cancelled.`, { status: job.status });
  }
  await compilerFor(env).cancel({ jobId: id, namespace: await compileNamespace(accountId) });
  await env.FILES.delete(jobInputKey(accountId, id)).catch((err) => log.warn("cancelled job input not deleted", { jobId: id, error: String(err) }));
  if (row.callbackStatus === "pending") {
    // through the queue like every callback attempt (retried there; the cron's sweep if this send fails)
    ctx.waitUntil(env.COMPILE_QUEUE.send({ kind: "callback", jobId: id, accountId } satisfies CompileQueueMessage, { contentType: "json" }).catch((err) => log.warn("compile callback not queued", { jobId: id, error: String(err) })));
  }
  return toJobView(row);
}
