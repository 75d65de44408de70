// One compile job: write the files into a warm process's directory, run as many
// passes (and bibtex/biber runs) as the document needs, collect the PDF or the
// errors, and remove every directory the job used.
import { constants, promises as fs } from "node:fs";
import path from "node:path";
import type { ChildProcess } from "node:child_process";
import type { Config } from "./config.ts";
import { killGroup, MAIN_BASENAME, MAIN_FILE, normaliseExit, spawnLimited, spawnOptions } from "./engine.ts";
import { checkJobDir, type JobCaps, type Overrun } from "./limits.ts";
import { firstCause, logTail, parseLog, parseToolOutput, type LogError, type LogWarning } from "./log-parser.ts";
import { needsRerun, planTools, snapshot, toolCommand, type Tool } from "./passes.ts";
import { removeDir, type Pools, type WarmProcess } from "./pool.ts";
import type { CompileRequest } from "./validate.ts";

export interface CompileSuccess {
  ok: true;
  pdf: Buffer;
  pages: number;
  passes: number;
  durationMs: number;
  warnings: LogWarning[];
  bibTool?: "bibtex" | "biber";
  /** The tools that ran between passes. */
  tools: Tool[];
}

export interface CompileFailure {
  ok: false;
  /** Which cap an output_too_large hit, when it was a count or the log. */
  limit?: "files" | "log_bytes";
  max?: number;
  code: "compile_error" | "compile_timeout" | "output_too_large";
  message: string;
  line?: number;
  file?: string;
  errors: LogError[];
  warnings: LogWarning[];
  log: string;
  passes: number;
  durationMs: number;
}

export type CompileResult = CompileSuccess | CompileFailure;

type Ending = "exit" | "timeout" | "aborted" | Overrun;

interface RunOutcome {
  ending: Ending;
  code: number | null;
  signal: NodeJS.Signals | null;
}

/**
 * What the server's thread reads of a log and of main.tex: the last 2 MiB of a log (TeX's
 * errors are at its end; a longer log loses early warnings only), the first 256 KiB of
 * main.tex when looking for the line that asked for a missing file (where preambles are; see firstCause).
 * Scans are linear, so these bound each job's cost on the thread every account shares.
 */
const MAX_LOG_PARSE = 2 * 1024 * 1024;
/** How often a running process's directory is looked at; sizes are summed every SIZE_EVERY-th look. */
const WATCH_MS = 200;
const SIZE_EVERY = 5;

/**
 * Waits for the process group to end; kills it at the deadline, when the server
 * shuts down (`signal`), or when the job directory is over a cap (see checkJobDir).
 */
async function runToExit(child: ChildProcess, exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>, dir: string, deadline: number, cfg: Config, signal?: AbortSignal): Promise<RunOutcome> {
  let ending: Ending = "exit";
  const stop = (why: Ending) => {
    if (ending === "exit") ending = why;
    killGroup(child);
  };
  const timer = setTimeout(() => stop("timeout"), Math.max(0, deadline - Date.now()));
  const onAbort = () => stop("aborted");
  if (signal?.aborted) onAbort();
  signal?.addEventListener("abort", onAbort);
  const caps: JobCaps = { maxEntries: cfg.limits.maxJobFiles, maxBytes: cfg.limits.maxJobDirBytes, maxLogBytes: cfg.limits.maxLogBytes, logName: `${MAIN_BASENAME}.log` };
  let watching = true;
  let wake: (() => void) | undefined;
  const watch = (async () => {
    for (let tick = 1; watching; tick++) {
      await new Promise<void>((r) => {
        wake = r;
        setTimeout(r, WATCH_MS);
      });
      if (!watching) break;
      const over = await checkJobDir(dir, caps, tick % SIZE_EVERY === 0);
      if (over && watching) {
        stop(over);
        break;
      }
    }
  })();
  const { code, signal: sig } = await exited;
  watching = false;
  wake?.();
  clearTimeout(timer);
  signal?.removeEventListener("abort", onAbort);
  killGroup(child); // stray children (xdvipdfmx) of a finished engine
  await watch;
  if (ending === "exit" && sig === "SIGXFSZ") ending = "too_large";
  if (ending === "exit" && (sig === "SIGXCPU" || (sig === "SIGKILL" && code === null))) ending = "timeout";
  return { ending, code, signal: sig };
}

function exitedOf(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve(normaliseExit(child.exitCode, child.signalCode as NodeJS.Signals | null));
    child.on("exit", (code, signal) => resolve(normaliseExit(code, signal)));
    child.on("error", () => resolve({ code: null, signal: null }));
  });
}

async function writeInputs(dir: string, req: CompileRequest, cfg: Config): Promise<void> {
  const own = async (p: string) => {
    if (cfg.engineUid !== undefined) await fs.chown(p, cfg.engineUid, cfg.engineGid ?? cfg.engineUid);
  };
  const made = new Set<string>();
  const write = async (rel: string, data: Buffer | string) => {
    const parts = rel.split("/");
    let cur = dir;
    for (const seg of parts.slice(0, -1)) {
      cur = path.join(cur, seg);
      if (made.has(cur)) continue;
      await fs.mkdir(cur, { mode: 0o700 });
      await own(cur);
      made.add(cur);
    }
    const target = path.join(dir, rel);
    // O_EXCL|O_NOFOLLOW: never follow or replace anything already there
    const fh = await fs.open(target, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
    try {
      await fh.writeFile(data);
    } finally {
      await fh.close();
    }
    await own(target);
  };
  await write(MAIN_FILE, req.source);
  for (const f of req.files) await write(f.path, f.data);
}

/** Moves everything of a finished pass into the directory of the next warm process. */
async function moveAll(from: string, to: string): Promise<void> {
  for (const name of await fs.readdir(from)) {
    if (name === ".texmf-var") continue; // the next process has its own cache dir
    await fs.rename(path.join(from, name), path.join(to, name));
  }
}

/** The last `max` bytes of a log (TeX's errors are at its end). */
async function readLog(dir: string, name = `${MAIN_BASENAME}.log`, max = MAX_LOG_PARSE): Promise<string> {
  const p = path.join(dir, name);
  const fh = await fs.open(p, constants.O_RDONLY | constants.O_NOFOLLOW).catch(() => undefined);
  if (!fh) return "";
  try {
    const { size } = await fh.stat();
    const len = Math.min(size, max);
    const buf = Buffer.alloc(len);
    await fh.read(buf, 0, len, size - len);
    return buf.toString("utf8");
  } finally {
    await fh.close();
  }
}

/** The job was stopped because the server is shutting down; it has no answer of its own. */
export class JobAborted extends Error {
  constructor() {
    super("The compile server is shutting down.");
  }
}

export async function runJob(req: CompileRequest, pools: Pools, cfg: Config, signal?: AbortSignal): Promise<CompileResult> {
  const started = Date.now();
  const deadline = started + req.timeoutMs;
  const pool = pools.get(req.engine);
  if (!pool) throw new Error(`engine ${req.engine} not enabled`);
  const hasBib = req.files.some((f) => f.path.endsWith(".bib"));
  let proc: WarmProcess = await pool.take();
  let dir = proc.dir;
  let passes = 0;
  let lastLog = "";
  let warnings: LogWarning[] = [];
  let pages: number | undefined;
  let bibTool: "bibtex" | "biber" | undefined;
  const toolsRun = new Set<Tool>();

  const fail = (code: CompileFailure["code"], message: string, errors: LogError[] = [], extra: Partial<CompileFailure> = {}): CompileFailure => ({
    ok: false,
    code,
    message,
    errors,
    warnings,
    log: logTail(lastLog, cfg.limits.logTailBytes),
    passes,
    durationMs: Date.now() - started,
    ...extra,
  });
  const limitFail = (ending: Exclude<Ending, "exit">, what: string): CompileFailure => {
    const L = cfg.limits;
    switch (ending) {
      case "aborted":
        throw new JobAborted();
      case "timeout":
        return fail("compile_timeout", `${what} did not finish within the time limit of ${req.timeoutMs} ms (or used up its CPU time).`);
      case "too_many_files":
        return fail("output_too_large", `${what} created more than ${L.maxJobFiles} files and directories.`, [], { limit: "files", max: L.maxJobFiles });
      case "log_too_large":
        return fail("output_too_large", `${what} wrote a log larger than ${L.maxLogBytes} bytes.`, [], { limit: "log_bytes", max: L.maxLogBytes });
      case "too_large":
        return fail("output_too_large", `${what} wrote more output than allowed (${L.maxOutputFileBytes} bytes per file, ${L.maxJobDirBytes} bytes per job).`);
    }
  };

  try {
    await writeInputs(dir, req, cfg);
    let before = await snapshot(dir);
    const toolsDone = new Map<string, string>();
    for (;;) {
      passes++;
      proc.go();
      const run = await runToExit(proc.child, proc.exited, dir, deadline, cfg, signal);
      if (run.ending !== "exit") {
        // stopped from outside: only the tail is answered, the log is not parsed
        lastLog = await readLog(dir, undefined, 2 * cfg.limits.logTailBytes);
        return limitFail(run.ending, `Pass ${passes} of ${req.engine}`);
      }
      lastLog = await readLog(dir);
      const parsed = parseLog(lastLog);
      warnings = parsed.warnings;
      pages = parsed.pages;
      if (parsed.errors.length > 0 || run.code !== 0) {
        const { first, errors } = firstCause(parsed, req.source, MAIN_FILE, `${req.engine} stopped with exit code ${run.code ?? run.signal}.`);
        return fail("compile_error", first.message, errors, { line: first.line, file: first.file });
      }
      let after = await snapshot(dir);

      // bibtex/biber (only when the request brought a .bib), makeindex for indexes,
      // glossaries and nomenclature: each only when its input changed
      const plan = await planTools(dir, lastLog, toolsDone, hasBib);
      if (!plan.ok) return fail("compile_error", plan.message, [{ message: plan.message, file: plan.file }], { file: plan.file });
      for (const t of plan.runs) {
        const [cmd, args] = toolCommand(t);
        const r = await runTool(cmd, args, dir, deadline, cfg, signal);
        if (r.ending !== "exit") return limitFail(r.ending, t.tool);
        // bibtex: 1 means warnings only
        if (r.code !== 0 && !(t.tool === "bibtex" && r.code === 1)) return toolFail(t.tool, (t.logFile ? await readLog(dir, t.logFile) : "") || r.output);
        toolsDone.set(t.id, t.key);
        if (t.tool !== "makeindex") bibTool = t.tool;
        toolsRun.add(t.tool);
      }
      const toolRan = plan.runs.length > 0;
      if (toolRan) after = await snapshot(dir);

      const again = toolRan || needsRerun(before, after, lastLog);
      if (!again || passes >= cfg.limits.maxPasses) break;
      const next = await pool.take();
      proc.kill();
      await moveAll(dir, next.dir);
      await removeDir(dir);
      proc = next;
      dir = next.dir;
      before = after;
    }

    const pdfPath = path.join(dir, `${MAIN_BASENAME}.pdf`);
    const st = await fs.lstat(pdfPath).catch(() => undefined);
    if (!st || !st.isFile()) return fail("compile_error", "No PDF was produced (the document has no pages).", [{ message: "No pages of output." }]);
    if (st.size > cfg.limits.maxPdfBytes) return fail("output_too_large", `The PDF is ${st.size} bytes; the limit is ${cfg.limits.maxPdfBytes}.`);
    const pdf = await fs.readFile(pdfPath);
    return { ok: true, pdf, pages: pages ?? countPages(pdf), passes, durationMs: Date.now() - started, warnings, bibTool, tools: [...toolsRun] };
  } finally {
    proc.kill();
    await removeDir(dir);
  }

  function toolFail(tool: string, output: string): CompileFailure {
    const errs = parseToolOutput(output);
    const first: LogError = errs[0] ?? { message: `${tool} failed.` };
    if (errs.length === 0) errs.push(first);
    lastLog = output;
    return fail("compile_error", `${tool}: ${first.message}`, errs, { line: first.line, file: first.file });
  }
}

async function runTool(cmd: string, args: string[], dir: string, deadline: number, cfg: Config, signal?: AbortSignal): Promise<RunOutcome & { output: string }> {
  const child = spawnLimited(cmd, args, spawnOptions(cfg, dir));
  child.stdin!.end();
  let output = "";
  const take = (c: Buffer) => {
    if (output.length < 64 * 1024) output += c.toString("utf8");
  };
  child.stdout!.on("data", take);
  child.stderr!.on("data", take);
  const r = await runToExit(child, exitedOf(child), dir, deadline, cfg, signal);
  return { ...r, output };
}

/** Fallback page count straight from the PDF (the log normally has it). */
export function countPages(pdf: Buffer): number {
  const s = pdf.toString("latin1");
  const m = s.match(/\/Type\s*\/Page(?![a-zA-Z])/g);
  return m ? m.length : 0;
}
