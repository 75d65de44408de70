// HTTP layer: routing, body reading with a size cap, error bodies, response headers.
import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Config } from "./config.ts";
import { type CompileResult, JobAborted, runJob } from "./job.ts";
import type { Cgroups } from "./cgroup.ts";
import { Busy, type Gate, type LoopLagMonitor } from "./limits.ts";
import { type JobHandle, type JobRegistry, jobRoute } from "./job-control.ts";
import type { Pools } from "./pool.ts";
import type { BodyParser, Parsed } from "./body.ts";
import type { Preambles } from "./preamble.ts";
import type { FontMaker } from "./mf.ts";
import type { CompileRequest, Issue } from "./validate.ts";
import type { LogWarning } from "./log-parser.ts";
import type { EnvironmentInfo } from "./environment.ts";
import { querySynctex } from "./synctex.ts";
import { parseSynctexQuery } from "./synctex-query.ts";

export interface AppState {
  cfg: Config;
  pools: Pools;
  gate: Gate;
  ready: () => boolean;
  lag: LoopLagMonitor;
  /** JSON parsing and validation of request bodies (large ones off the main thread). */
  body: BodyParser;
  /** Aborted when the server shuts down: running jobs are killed, new ones refused. */
  shutdown: AbortSignal;
  preambles?: Preambles;
  /** Per-job control groups, where the kernel allows them. */
  cgroups?: Cgroups | undefined;
  /** Makes bitmap fonts from TeX Live's METAFONT sources when a compile needs them. */
  fonts?: FontMaker | undefined;
  /** The installation's TeX Live, engines, packages and fonts (GET /environment). */
  environment?: EnvironmentInfo | undefined;
  /** Async jobs (sent with X-Job-Id) that can be cancelled and followed while they run. */
  jobs?: JobRegistry | undefined;
}

/** Which isolation is in force: the sandbox (or the safe mode), the uids, and the per-job caps (control groups, or per-process rlimits only). */
function isolation(st: AppState) {
  const g = st.cgroups;
  const L = st.cfg.limits;
  return {
    sandbox: st.cfg.sandbox ? "bwrap" : st.cfg.safeMode ? "safe-mode" : "off",
    // each job folder's own uid (uids.ts), or every engine as the server's (not root) uid
    uids: st.cfg.uids ? "per-job" : "server",
    shellEscape: L.shellEscape,
    jobCaps: g && g.mode !== "none" ? { cgroup: g.mode, processes: L.jobProcesses, memoryBytes: L.jobMemoryBytes } : { cgroup: "none", ...(g?.reason ? { reason: g.reason } : {}) },
    perProcess: { cpuSeconds: L.cpuSeconds, memoryBytes: L.memoryBytes, fileBytes: L.maxOutputFileBytes },
  };
}

class HttpError extends Error {
  readonly status: number;
  readonly code: string;
  readonly extra: Record<string, unknown>;
  readonly headers: Record<string, string>;
  constructor(status: number, code: string, message: string, extra: Record<string, unknown> = {}, headers: Record<string, string> = {}) {
    super(message);
    this.status = status;
    this.code = code;
    this.extra = extra;
    this.headers = headers;
  }
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const data = Buffer.from(JSON.stringify(body));
  res.writeHead(status, { "Content-Type": "application/json", "Content-Length": String(data.length), ...headers });
  res.end(data);
}

function sendError(res: ServerResponse, e: HttpError): void {
  sendJson(res, e.status, { error: { code: e.code, message: e.message, ...e.extra } }, e.headers);
}

async function readBody(req: IncomingMessage, max: number): Promise<Buffer> {
  const declared = Number(req.headers["content-length"] ?? "0");
  if (declared > max) throw new HttpError(413, "payload_too_large", `The request body is larger than ${max} bytes.`);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > max) throw new HttpError(413, "payload_too_large", `The request body is larger than ${max} bytes.`);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

function shuttingDown(): HttpError {
  return new HttpError(503, "shutting_down", "The compile server is shutting down; retry on another instance.", { retryAfterSeconds: 1 }, { "Retry-After": "1" });
}

/** Logged only: the caller that would read it has gone. */
function clientClosed(): HttpError {
  return new HttpError(499, "client_closed", "The caller closed the connection.");
}

function jobCancelled(): HttpError {
  return new HttpError(409, "job_cancelled", "The job was cancelled.");
}

/** The job of a compile sent with X-Job-Id, registered so it can be cancelled and followed. */
function registerJob(req: IncomingMessage, st: AppState, namespace: string | undefined): JobHandle | undefined {
  const id = req.headers["x-job-id"];
  if (id === undefined || !st.jobs) return undefined;
  const h = st.jobs.start(String(id), namespace);
  if (h === "invalid") throw invalid([{ path: "X-Job-Id", message: "must be 1 to 64 letters, digits, _ or -" }]);
  if (h === "cancelled") throw jobCancelled();
  if (h === "duplicate") throw new HttpError(409, "job_running", "A job with this id is already running here.");
  return h;
}

/** A job's last event, from what its compile answered. */
function finalEvent(h: JobHandle, result: CompileResult | undefined, e: unknown): [string, Record<string, unknown>] {
  if (h.cancelled) return ["cancelled", {}];
  if (result?.ok) return ["result", { ok: true, pages: result.pages, passes: result.passes, durationMs: result.durationMs, tools: result.tools }];
  if (result) return ["result", { ok: false, code: result.code, message: result.message, line: result.line ?? null, file: result.file ?? null, passes: result.passes, durationMs: result.durationMs }];
  return ["result", { ok: false, code: e instanceof HttpError ? e.code : "internal_error" }];
}

function invalid(issues: Issue[]): HttpError {
  return new HttpError(400, "invalid_request", issues.map((i) => (i.path ? `${i.path}: ${i.message}` : i.message)).join("; "), { details: { issues } });
}

async function compile(req: IncomingMessage, res: ServerResponse, st: AppState): Promise<void> {
  const ctype = String(req.headers["content-type"] ?? "");
  if (!/^application\/json\b/i.test(ctype)) {
    req.resume();
    throw new HttpError(415, "unsupported_media_type", "Send the request as application/json.");
  }
  const raw = await readBody(req, st.cfg.limits.maxRequestBytes);
  let v: Parsed;
  try {
    v = await st.body.parse(raw);
  } catch (e) {
    // the parser thread is stuck or gone (an overloaded machine): the request itself is fine
    console.error("body parser:", (e as Error).message);
    throw new HttpError(503, "compiler_busy", "The compile server is overloaded.", { retryAfterSeconds: 1 }, { "Retry-After": "1" });
  }
  if (!v.ok) throw invalid(v.issues);
  if (!st.pools.get(v.value.engine)) throw invalid([{ path: "engine", message: "engine not enabled on this server" }]);

  if (st.shutdown.aborted) throw shuttingDown();
  const job = registerJob(req, st, v.value.namespace);
  let result: CompileResult | undefined;
  try {
    result = await compileJob(req, res, st, v.value, job);
  } catch (e) {
    if (job) st.jobs!.finish(job, ...finalEvent(job, result, e));
    throw e;
  }
  if (job) st.jobs!.finish(job, ...finalEvent(job, result, undefined));
  answerResult(res, v.value, result);
}

/** Runs a validated compile in a compile slot; `job`: its registration (cancel, events). */
async function compileJob(req: IncomingMessage, res: ServerResponse, st: AppState, value: CompileRequest, job: JobHandle | undefined): Promise<CompileResult> {
  // A caller that hangs up (its own deadline, a retry elsewhere) has its job killed: the time
  // would only be taken from other requests.
  const gone = new AbortController();
  const hangUp = () => {
    if (!res.writableEnded) gone.abort();
  };
  res.once("close", hangUp);
  let release: () => void;
  try {
    release = await st.gate.acquire(value.namespace, job?.signal);
  } catch (e) {
    res.off("close", hangUp);
    if (job?.cancelled) throw jobCancelled();
    if (e instanceof Busy) {
      throw new HttpError(503, "compiler_busy", e.message, { retryAfterSeconds: e.retryAfterSeconds }, { "Retry-After": String(e.retryAfterSeconds) });
    }
    throw e;
  }
  try {
    if (st.shutdown.aborted) throw shuttingDown();
    if (gone.signal.aborted) throw clientClosed();
    if (job?.cancelled) throw jobCancelled();
    job?.events.emit("status", { state: "running" });
    const signals = job ? [st.shutdown, gone.signal, job.signal] : [st.shutdown, gone.signal];
    return await runJob(value, st.pools, st.cfg, AbortSignal.any(signals), st.preambles, st.cgroups, st.fonts, job?.events);
  } catch (e) {
    if (!(e instanceof JobAborted)) throw e;
    if (job?.cancelled) throw jobCancelled();
    if (st.shutdown.aborted) throw shuttingDown();
    throw clientClosed();
  } finally {
    release();
    res.off("close", hangUp);
  }
}

function answerResult(res: ServerResponse, value: CompileRequest, result: CompileResult): void {
  if (result.ok) {
    const body = result.output?.body ?? result.pdf;
    res.writeHead(200, {
      "Content-Type": result.output?.contentType ?? "application/pdf",
      "Content-Length": String(body.length),
      "X-Compile-Duration-Ms": String(result.durationMs),
      "X-Engine": value.engine,
      "X-Compile-Pages": String(result.pages),
      "X-Compile-Passes": String(result.passes),
      "X-Compile-Warnings": String(result.warnings.length),
      ...(result.bibTool ? { "X-Compile-Bib": result.bibTool } : {}),
      ...(result.tools.length ? { "X-Compile-Tools": result.tools.join(",") } : {}),
      ...(result.preamble ? { "X-Compile-Preamble": result.preamble } : {}),
      ...(result.output?.pages ? { "X-Output-Pages": result.output.pages } : {}),
      ...(result.errorCount ? { "X-Compile-Errors": String(result.errorCount) } : {}),
      ...projectHeader(result.warnings),
    });
    res.end(body);
    return;
  }
  const { ok: _ok, code, message, ...rest } = result;
  throw new HttpError(422, code, message, rest, {
    "X-Compile-Duration-Ms": String(result.durationMs),
    "X-Engine": value.engine,
    "X-Compile-Passes": String(result.passes),
  });
}

/** POST /synctex: the body is a compile's `<name>.synctex.gz`, the query a position (synctex.ts). */
async function synctex(req: IncomingMessage, res: ServerResponse, st: AppState, params: URLSearchParams): Promise<void> {
  const q = parseSynctexQuery(params);
  if (!q.ok) {
    req.resume();
    throw invalid(q.issues);
  }
  const gz = await readBody(req, st.cfg.limits.maxRequestBytes);
  if (st.shutdown.aborted) throw shuttingDown();
  let release: () => void;
  try {
    release = await st.gate.acquire(undefined);
  } catch (e) {
    if (e instanceof Busy) throw new HttpError(503, "compiler_busy", e.message, { retryAfterSeconds: e.retryAfterSeconds }, { "Retry-After": String(e.retryAfterSeconds) });
    throw e;
  }
  try {
    const r = await querySynctex(st.cfg, st.pools.fairness, gz, q.value, st.shutdown);
    if (!r.ok) throw new HttpError(r.status, r.code, r.message);
    sendJson(res, 200, { positions: r.positions });
  } finally {
    release();
  }
}

/** The latexmkrc settings that were ignored, percent-encoded (a header is ASCII), their first 300 characters. */
function projectHeader(warnings: LogWarning[]): Record<string, string> {
  const notes = warnings.filter((w) => w.kind === "project").map((w) => w.message);
  if (notes.length === 0) return {};
  // cut at whole characters: half a surrogate pair has no encoding
  return { "X-Compile-Project-Warnings": encodeURIComponent(Array.from(notes.join("; ")).slice(0, 300).join("")) };
}

export function createHandler(st: AppState) {
  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const rid = String(req.headers["x-request-id"] ?? "") || randomUUID();
    res.setHeader("X-Request-Id", rid);
    const url = new URL(req.url ?? "/", "http://local");
    const started = Date.now();
    try {
      if (url.pathname.startsWith("/jobs/") && st.jobs) await jobRoute(req, res, st.jobs, url);
      else if (url.pathname === "/compile") {
        if (req.method !== "POST") throw new HttpError(405, "method_not_allowed", "Use POST /compile.", {}, { Allow: "POST" });
        await compile(req, res, st);
      } else if (url.pathname === "/healthz") {
        if (req.method !== "GET" && req.method !== "HEAD") throw new HttpError(405, "method_not_allowed", "Use GET /healthz.", {}, { Allow: "GET, HEAD" });
        const ready = st.ready();
        const body = { ok: ready, pools: st.pools.stats(), jobs: st.gate.stats(), fairness: st.pools.fairness.stats(), engines: st.cfg.engines, isolation: isolation(st), eventLoopLagMs: st.lag.stats(), ...(st.preambles ? { preambles: st.preambles.stats() } : {}) };
        if (ready) sendJson(res, 200, body);
        else sendJson(res, 503, { ...body, error: { code: "not_ready", message: "Engine pools are still warming up." } }, { "Retry-After": "1" });
      } else if (url.pathname === "/synctex") {
        if (req.method !== "POST") throw new HttpError(405, "method_not_allowed", "Use POST /synctex.", {}, { Allow: "POST" });
        await synctex(req, res, st, url.searchParams);
      } else if (url.pathname === "/environment" && st.environment) {
        if (req.method !== "GET") throw new HttpError(405, "method_not_allowed", "Use GET /environment.", {}, { Allow: "GET" });
        const data = await st.environment.json();
        res.writeHead(200, { "Content-Type": "application/json", "Content-Length": String(data.length), "Cache-Control": "public, max-age=3600" });
        res.end(data);
      } else {
        req.resume();
        throw new HttpError(404, "not_found", `No route ${url.pathname}.`);
      }
    } catch (e) {
      if (res.headersSent) {
        res.destroy();
        return;
      }
      if (e instanceof HttpError) sendError(res, e);
      else {
        console.error(`[${rid}]`, e);
        sendError(res, new HttpError(500, "internal_error", "The compile server failed unexpectedly."));
      }
    } finally {
      if (st.cfg.logRequests) console.log(`${req.method} ${url.pathname} ${res.statusCode} ${Date.now() - started}ms ${rid}`);
    }
  };
}
