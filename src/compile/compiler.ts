import { sha256Hex } from "../platform/crypto.ts";
import { ApiError, errors } from "../platform/errors.ts";
import { COMPILE_LIMITS } from "./limits.ts";
import type { CompileFile, Engine } from "./schemas.ts";
import { log } from "../platform/log.ts";

/** What the compile server takes (container/ `POST /compile`). */
export interface CompileInput {
  engine: Engine;
  source: string;
  files?: CompileFile[] | undefined;
  timeoutMs?: number | undefined;
  mainPath?: string | undefined;
  draft?: boolean | undefined;
  shellEscape?: boolean | undefined;
  /** Set only when not the defaults (the PDF; halting on errors), so other requests keep their cache keys. */
  output?: "png" | "svg" | "log" | "zip" | undefined;
  dpi?: number | undefined;
  firstPage?: number | undefined;
  lastPage?: number | undefined;
  synctex?: boolean | undefined;
  haltOnError?: false | undefined;
}

/** Per-request context for the compile server, not part of the document. */
export interface CompileContext {
  /** The account's scope for the server's per-account caches (precompiled preambles); see compileNamespace. */
  namespace?: string | undefined;
  /** An async job's id: the server registers the compile under it (and the namespace) so it can be cancelled and followed. */
  jobId?: string | undefined;
}

/** An async job on the compile server, reached by its id and its account's namespace. */
export interface JobRef {
  jobId: string;
  namespace: string;
}

/**
 * The compile server keeps precompiled preambles per namespace. It gets a hash of the account id,
 * not the id: the server needs to tell accounts apart, not to know them.
 */
export async function compileNamespace(accountId: string): Promise<string> {
  return (await sha256Hex(`compile-namespace/v1\n${accountId}`)).slice(0, 32);
}

export interface CompiledPdf {
  /** The answer's bytes: the PDF, or the output the request asked for. */
  pdf: ArrayBuffer;
  /** Its type (`application/pdf`, `image/png`, `image/svg+xml`, `text/plain; charset=utf-8`, `application/zip`). */
  contentType: string;
  /** The pages rendered as images ("2-4"). */
  outputPages?: string;
  /** Errors TeX went on after (haltOnError: false). */
  errorCount?: number;
  engine: Engine;
  /** Time the server spent compiling (its X-Compile-Duration-Ms). */
  durationMs: number;
  pages: number | null;
  passes: number | null;
  /** The server started from this account's precompiled preamble ("hit"), or had none yet ("miss"). */
  preamble: "hit" | "miss" | null;
  /** The project's latexmkrc settings the server ignored (percent-encoded), when there were any. */
  projectWarnings?: string;
}

/** A header value the compile server percent-encoded: passed on only as printable ASCII of a bounded length. */
const ENCODED = /^[\x21-\x7e]{1,3000}$/;

/**
 * One interface, two transports (chosen by configuration, see compilerFor): the TEX_CONTAINER
 * Container binding in production, a plain URL to the natively run server in dev and tests.
 * compile() resolves with the PDF or throws an ApiError: the server's own 4xx (400, 413, 422
 * `compile_error`/`compile_timeout`/`output_too_large`) passed through, 422 `compile_timeout` when
 * no answer came within the job's time limit plus TRANSPORT_SLACK_MS (final: the document is the
 * likely cause, so it is never sent to another instance), or 503 when no compiler answered
 * (infrastructure; safe to retry).
 */
export interface Compiler {
  compile(input: CompileInput, context?: CompileContext): Promise<CompiledPdf>;
  /** The compile server's GET /environment (its TeX installation), as JSON text. */
  environment(): Promise<string>;
  /** The compile server's answer to a SyncTeX query (`query`: its query string) on a compile's `.synctex.gz`, as JSON text. */
  synctex(gz: Uint8Array, query: string): Promise<string>;
  /**
   * Stops the job where it runs (its engines killed, its slot freed) or, not there yet, has it refused
   * on arrival. True when a server had it running; never throws (the job's status is already cancelled).
   */
  cancel(job: JobRef): Promise<boolean>;
  /** The server's SSE stream of a running (or just finished) job; null when no server has it. */
  events(job: JobRef, lastEventId: number): Promise<Response | null>;
}

/** The compile server's control paths of a job (container/src/job-control.ts). */
export function jobControlPath(job: JobRef, events = false): string {
  return `/jobs/${encodeURIComponent(job.jobId)}${events ? "/events" : ""}?namespace=${encodeURIComponent(job.namespace)}`;
}

/** How long a cancel or an events request may take to be answered (the server answers a cancel once the job has stopped). */
export const CONTROL_TIMEOUT_MS = 8_000;

/** True for a server's SSE answer. */
export function isEventStream(res: Response): boolean {
  return res.status === 200 && (res.headers.get("content-type") ?? "").startsWith("text/event-stream");
}

/** A compile server's answer to POST /synctex, as JSON text, or its 4xx as the same error. */
export async function synctexAnswer(res: Response): Promise<string> {
  const type = res.headers.get("content-type") ?? "";
  if (!type.startsWith("application/json")) {
    await res.body?.cancel();
    throw errors.unavailable("The compiler answered unexpectedly. Retry shortly.", 2);
  }
  const text = await res.text();
  if (res.status === 200) return text;
  let err: { code?: unknown; message?: unknown } | undefined;
  try {
    err = (JSON.parse(text) as { error?: typeof err }).error;
  } catch {
    /* below */
  }
  if ((res.status === 400 || res.status === 422) && typeof err?.code === "string" && typeof err.message === "string") throw new ApiError(res.status, err.code, err.message);
  throw errors.unavailable("The compiler could not answer the SyncTeX query. Retry shortly.", 2);
}

/** The request of a SyncTeX query (POST /synctex). */
export function synctexRequestInit(gz: Uint8Array): RequestInit {
  return { method: "POST", headers: { "content-type": "application/gzip" }, body: gz };
}

/** The first answer of a server reads its installation (seconds); later ones are at once. */
export const ENVIRONMENT_TIMEOUT_MS = 30_000;

/** The most an environment answer may be (its package list is the bulk: about 1 MB). */
const MAX_ENVIRONMENT_BYTES = 8 * 1024 * 1024;

/** The JSON text of a compile server's GET /environment answer; 503 when there is none. */
export async function environmentOf(res: Response): Promise<string> {
  const declared = intHeader(res, "content-length");
  if (res.status !== 200 || !(res.headers.get("content-type") ?? "").startsWith("application/json") || (declared !== null && declared > MAX_ENVIRONMENT_BYTES)) {
    await res.body?.cancel();
    throw errors.unavailable("The compiler did not describe its environment. Retry shortly.", 5);
  }
  const text = await res.text();
  if (text.length > MAX_ENVIRONMENT_BYTES) throw errors.unavailable("The compiler did not describe its environment. Retry shortly.", 5);
  return text;
}

/** Slack over the compile time limit for the server's own queueing and the transfer. */
export const TRANSPORT_SLACK_MS = 35_000;

export function compileRequestInit(input: CompileInput, context: CompileContext = {}): RequestInit {
  return {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/pdf, application/json", ...(context.jobId !== undefined ? { "x-job-id": context.jobId } : {}) },
    body: JSON.stringify({
      engine: input.engine,
      source: input.source,
      files: input.files ?? [],
      timeoutMs: timeLimitOf(input),
      ...(input.mainPath !== undefined ? { mainPath: input.mainPath } : {}),
      ...(input.draft ? { draft: true } : {}),
      ...(input.shellEscape ? { shellEscape: true } : {}),
      ...outputFields(input),
      ...(context.namespace !== undefined ? { namespace: context.namespace } : {}),
    }),
  };
}

/** The output fields of an input, as the compile server takes them. */
export function outputFields(input: CompileInput): Partial<CompileInput> {
  const out: Partial<CompileInput> = {};
  for (const k of ["output", "dpi", "firstPage", "lastPage", "synctex", "haltOnError"] as const) if (input[k] !== undefined) (out as Record<string, unknown>)[k] = input[k];
  return out;
}

/** What the compile server answers on a 200, by output. */
export const OUTPUT_TYPES: Record<string, string> = {
  pdf: "application/pdf",
  png: "image/png",
  svg: "image/svg+xml",
  log: "text/plain; charset=utf-8",
  zip: "application/zip",
};
const ANSWER_TYPES = new Set(Object.values(OUTPUT_TYPES));

/** True when the response comes from the compile server itself (JSON error, PDF or another output), not from the platform in front of it. */
export function isServerAnswer(res: Response): boolean {
  const type = res.headers.get("content-type") ?? "";
  // the platform's own errors are text: only a 200 of the server's output types counts
  return type.startsWith("application/pdf") || type.startsWith("application/json") || (res.status === 200 && ANSWER_TYPES.has(type));
}

function intHeader(res: Response, name: string): number | null {
  const v = res.headers.get(name);
  if (v === null || v === "") return null;
  const n = Number(v);
  return Number.isFinite(n) ? Math.round(n) : null;
}

function retryAfter(res: Response, fallback = 2): number {
  const n = Number(res.headers.get("retry-after"));
  return Number.isFinite(n) && n > 0 ? Math.ceil(n) : fallback;
}

/** Turns an answer of the compile server into a CompiledPdf or the matching ApiError. */
export async function interpretServerAnswer(res: Response, input: CompileInput): Promise<CompiledPdf> {
  if (res.status === 200) {
    const declared = intHeader(res, "content-length");
    if (declared !== null && declared > COMPILE_LIMITS.maxPdfBytes) {
      await res.body?.cancel();
      throw outputTooLarge(declared);
    }
    const pdf = await res.arrayBuffer();
    if (pdf.byteLength > COMPILE_LIMITS.maxPdfBytes) throw outputTooLarge(pdf.byteLength);
    // a type the request could not have asked for is not passed on as it is
    const type = res.headers.get("content-type") ?? "";
    const contentType = ANSWER_TYPES.has(type) ? type : "application/octet-stream";
    const outputPages = res.headers.get("x-output-pages");
    const errorCount = intHeader(res, "x-compile-errors");
    return {
      pdf,
      contentType,
      ...(outputPages !== null && /^\d{1,7}-\d{1,7}$/.test(outputPages) ? { outputPages } : {}),
      ...(errorCount !== null && errorCount > 0 ? { errorCount } : {}),
      engine: (res.headers.get("x-engine") as Engine | null) ?? input.engine,
      durationMs: intHeader(res, "x-compile-duration-ms") ?? 0,
      pages: intHeader(res, "x-compile-pages"),
      passes: intHeader(res, "x-compile-passes"),
      preamble: ((p) => (p === "hit" || p === "miss" ? p : null))(res.headers.get("x-compile-preamble")),
      ...((w) => (w !== null && ENCODED.test(w) ? { projectWarnings: w } : {}))(res.headers.get("x-compile-project-warnings")),
    };
  }
  let body: { error?: { code?: unknown; message?: unknown; [k: string]: unknown } } = {};
  try {
    body = (await res.json()) as typeof body;
  } catch {
    /* handled below as an unexpected answer */
  }
  const err = body.error;
  const code = typeof err?.code === "string" ? err.code : undefined;
  const message = typeof err?.message === "string" ? err.message : undefined;
  if (res.status === 503 || res.status === 429) {
    const seconds = retryAfter(res);
    throw compilerBusy(seconds);
  }
  if (code && message && (res.status === 400 || res.status === 413 || res.status === 422 || (res.status === 409 && code === "job_cancelled"))) {
    const { code: _c, message: _m, ...details } = err!;
    throw new ApiError(res.status, code, message, details);
  }
  log.error("unexpected compile server answer", { status: res.status, code });
  throw errors.unavailable("The compiler answered unexpectedly. Retry shortly.", 2);
}

/**
 * The one mapping of "the compile ran out of time" when the compile server could not say so itself
 * (no answer by the transport's deadline): the same 422 the server answers at its own deadline.
 */
export function compileTimeout(timeoutMs: number): ApiError {
  return new ApiError(422, "compile_timeout", `The compile did not finish within its time limit of ${timeoutMs} ms.`, { errors: [], log: "" });
}

/** The job's time limit, as sent to the server. */
export function timeLimitOf(input: CompileInput): number {
  return input.timeoutMs ?? COMPILE_LIMITS.defaultTimeoutMs;
}

export function compilerBusy(seconds: number): ApiError {
  return new ApiError(503, "compiler_busy", "Every compiler is busy. Retry after the number of seconds in Retry-After.", { retryAfter: seconds }, { "Retry-After": String(seconds) });
}

function outputTooLarge(bytes: number): ApiError {
  return new ApiError(422, "output_too_large", `The output is ${bytes} bytes, over the limit of ${COMPILE_LIMITS.maxPdfBytes} bytes.`, { limitBytes: COMPILE_LIMITS.maxPdfBytes });
}

/** True for failures worth retrying later (no compiler answered, or all were busy). */
export function isInfrastructureError(err: unknown): boolean {
  return !(err instanceof ApiError) || err.status >= 500;
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
