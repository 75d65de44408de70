// One compile job: write the files into a warm process's directory, run as many
// passes (and bibtex/biber runs) as the document needs, collect the PDF or the
// errors, and remove every directory the job used.
import { constants, promises as fs } from "node:fs";
import path from "node:path";
import type { ChildProcess } from "node:child_process";
import type { Config } from "./config.ts";
import { goLine, killGroup, MAIN_BASENAME, normaliseExit, spawnLimited, spawnOptions } from "./engine.ts";
import { dirSize } from "./limits.ts";
import { logTail, parseLog, type LogError, type LogWarning } from "./log-parser.ts";
import { biberKey, biberSources, bibtexKey, needsRerun, snapshot } from "./passes.ts";
import { removeDir, spawnProcess, type EnginePool, type Pools, type ProcessSpec, type WarmProcess } from "./pool.ts";
import type { PreambleUse, Preambles } from "./preamble.ts";
import type { CompileRequest } from "./validate.ts";

export interface CompileSuccess {
  ok: true;
  pdf: Buffer;
  pages: number;
  passes: number;
  durationMs: number;
  warnings: LogWarning[];
  bibTool?: "bibtex" | "biber";
  /** Whether a precompiled preamble was used ("hit"), or none existed yet ("miss"). */
  preamble?: "hit" | "miss";
}

export interface CompileFailure {
  ok: false;
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

type Ending = "exit" | "timeout" | "too_large";

interface RunOutcome {
  ending: Ending;
  code: number | null;
  signal: NodeJS.Signals | null;
}

const MAX_LOG_PARSE = 8 * 1024 * 1024;

/** Waits for the process group to end; kills it at the deadline or when the job dir grows too big. */
async function runToExit(child: ChildProcess, exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>, dir: string, deadline: number, cfg: Config): Promise<RunOutcome> {
  let ending: Ending = "exit";
  const timer = setTimeout(() => {
    ending = "timeout";
    killGroup(child);
  }, Math.max(0, deadline - Date.now()));
  let watching = true;
  let wake: (() => void) | undefined;
  const watch = (async () => {
    while (watching) {
      await new Promise<void>((r) => {
        wake = r;
        setTimeout(r, 200);
      });
      if (!watching) break;
      const size = await dirSize(dir, cfg.limits.maxJobDirBytes);
      if (size > cfg.limits.maxJobDirBytes) {
        ending = "too_large";
        killGroup(child);
        break;
      }
    }
  })();
  const { code, signal } = await exited;
  watching = false;
  wake?.();
  clearTimeout(timer);
  killGroup(child); // stray children (xdvipdfmx) of a finished engine
  await watch;
  if (ending === "exit" && signal === "SIGXFSZ") ending = "too_large";
  if (ending === "exit" && (signal === "SIGXCPU" || (signal === "SIGKILL" && code === null))) ending = "timeout";
  return { ending, code, signal };
}

function exitedOf(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve(normaliseExit(child.exitCode, child.signalCode as NodeJS.Signals | null));
    child.on("exit", (code, signal) => resolve(normaliseExit(code, signal)));
    child.on("error", () => resolve({ code: null, signal: null }));
  });
}

/** The main file's folder in the project ("" for the root) and its name. */
export function mainParts(mainPath: string): { sub: string; mainFile: string } {
  const i = mainPath.lastIndexOf("/");
  return i < 0 ? { sub: "", mainFile: mainPath } : { sub: mainPath.slice(0, i), mainFile: mainPath.slice(i + 1) };
}

export async function writeInputs(dir: string, req: CompileRequest, cfg: Config): Promise<void> {
  const own = async (p: string) => {
    if (cfg.engineUid !== undefined) await fs.chown(p, cfg.engineUid, cfg.engineGid ?? cfg.engineUid);
  };
  const made = new Set<string>();
  // the main file's folder was made when the engine was started there
  const { sub } = mainParts(req.mainPath);
  if (sub) for (let d = path.join(dir, sub); d.startsWith(dir + path.sep); d = path.dirname(d)) if ((await fs.lstat(d).catch(() => undefined))?.isDirectory()) made.add(d);
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
  await write(req.mainPath, req.source);
  for (const f of req.files) await write(f.path, f.data);
}

/**
 * Moves everything of a finished pass into the directory of the next warm process.
 * Folders the next process already has (the main file's, made at its start) are
 * merged; files it already has (its own log, opened before the job) stay its own.
 */
async function moveAll(from: string, to: string, depth = 0): Promise<void> {
  for (const name of await fs.readdir(from)) {
    if (depth === 0 && name === ".texmf-var") continue; // the next process has its own cache dir
    const src = path.join(from, name);
    const dst = path.join(to, name);
    const there = await fs.lstat(dst).catch(() => undefined);
    if (!there) await fs.rename(src, dst);
    else if (there.isDirectory() && depth < 8) await moveAll(src, dst, depth + 1);
  }
}

async function readLog(dir: string, name = `${MAIN_BASENAME}.log`): Promise<string> {
  const p = path.join(dir, name);
  const fh = await fs.open(p, constants.O_RDONLY | constants.O_NOFOLLOW).catch(() => undefined);
  if (!fh) return "";
  try {
    const { size } = await fh.stat();
    const len = Math.min(size, MAX_LOG_PARSE);
    const buf = Buffer.alloc(len);
    await fh.read(buf, 0, len, size - len);
    return buf.toString("utf8");
  } finally {
    await fh.close();
  }
}

/**
 * "File `x.sty' not found" is reported where TeX stopped reading, often the line
 * after the \usepackage; point at the line that asked for the file instead.
 */
function fixMissingFileLine(e: LogError, source: string, mainFile: string): void {
  const m = /File `([^']+?)(?:\.(sty|cls))?' not found/.exec(e.message);
  if (!m || (e.file !== undefined && e.file !== mainFile)) return;
  const name = (m[1] ?? "").replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const cmd = m[2] === "cls" ? "documentclass" : m[2] === "sty" ? "(?:usepackage|RequirePackage)" : "(?:input|include|usepackage|documentclass)";
  const re = new RegExp(`\\\\${cmd}\\b[^\\n]*[{,]\\s*${name}\\s*[,}]`);
  const lines = source.split("\n");
  for (let i = 0; i < lines.length; i++) {
    if (re.test(lines[i] ?? "")) {
      e.line = i + 1;
      e.file = mainFile;
      return;
    }
  }
}

function lineCount(s: string): number {
  return s.replace(/\n$/, "").split("\n").length;
}

/** Where the engine processes of one job's passes come from. */
interface ProcessSource {
  take(): Promise<WarmProcess>;
  /** The job is over; `ok`: it succeeded (a spare process may then be kept). */
  close(ok: boolean): void;
}

/** The warm pool: engines started in a job directory's root from the engine's own format. */
function poolSource(pool: EnginePool): ProcessSource {
  return { take: () => pool.take(), close: () => {} };
}

/**
 * Processes started for this job, in the main file's folder and/or from a preamble
 * format. The next pass's process starts while the current pass runs; an unused one
 * goes to `spare` when the job succeeded (kept warm for the next compile).
 */
function dedicatedSource(cfg: Config, engine: CompileRequest["engine"], spec: ProcessSpec, first?: WarmProcess, spare?: (p: WarmProcess) => void): ProcessSource {
  let pending: WarmProcess | undefined = first;
  let next: Promise<WarmProcess | undefined> | undefined;
  const start = () => spawnProcess(cfg, engine, spec).catch(() => undefined);
  const discard = (p: WarmProcess) => {
    p.kill();
    void p.exited.then(() => removeDir(p.dir));
  };
  return {
    async take() {
      let p = pending;
      pending = undefined;
      if (!p && next) p = await next;
      next = start();
      return p ?? spawnProcess(cfg, engine, spec);
    },
    close(ok) {
      const n = next;
      next = undefined;
      if (pending) discard(pending);
      void n?.then((p) => {
        if (!p) return;
        if (ok && spare) spare(p);
        else discard(p);
      });
    },
  };
}

/**
 * Compiles one request: from a precompiled preamble when a verified one exists (and,
 * should that fail, once more the normal way within the same deadline), otherwise
 * the normal way, after which the preamble may be dumped in the background.
 */
export async function runJob(req: CompileRequest, pools: Pools, cfg: Config, preambles?: Preambles): Promise<CompileResult> {
  const started = Date.now();
  const deadline = started + req.timeoutMs;
  const pool = pools.get(req.engine);
  if (!pool) throw new Error(`engine ${req.engine} not enabled`);
  const { sub } = mainParts(req.mainPath);
  const use = preambles?.lookup(req);
  if (use) {
    const r = await runPasses(req, formatSource(cfg, req, use, preambles), cfg, started, deadline, true);
    if (r.ok) return { ...r, preamble: "hit" };
    if (r.code !== "compile_error") return r;
    const again = await runPasses(req, sub ? dedicatedSource(cfg, req.engine, { subdir: sub }) : poolSource(pool), cfg, started, deadline, false);
    if (again.ok) preambles?.reject(use.key);
    return again;
  }
  const r = await runPasses(req, sub ? dedicatedSource(cfg, req.engine, { subdir: sub }) : poolSource(pool), cfg, started, deadline, false);
  if (r.ok && preambles?.keyOf(req)) {
    preambles.afterCompile(req, r);
    return { ...r, preamble: "miss" };
  }
  return r;
}

function formatSource(cfg: Config, req: CompileRequest, use: PreambleUse, preambles?: Preambles): ProcessSource {
  const { sub } = mainParts(req.mainPath);
  return dedicatedSource(cfg, req.engine, { subdir: sub || undefined, fmtFile: use.fmtFile }, use.warm, (p) => preambles?.keepWarm(use.key, p));
}

/** Compiles `req` from a dumped preamble only (the verification of a new format). */
export async function compileWithFormat(req: CompileRequest, use: PreambleUse, cfg: Config): Promise<{ pdf: Buffer; pages: number } | undefined> {
  const started = Date.now();
  const r = await runPasses(req, formatSource(cfg, req, use), cfg, started, started + req.timeoutMs, true);
  return r.ok ? { pdf: r.pdf, pages: r.pages } : undefined;
}

async function runPasses(req: CompileRequest, source: ProcessSource, cfg: Config, started: number, deadline: number, fromFormat: boolean): Promise<CompileResult> {
  const hasBib = req.files.some((f) => f.path.endsWith(".bib"));
  const { sub, mainFile } = mainParts(req.mainPath);
  const go = goLine({ mainFile, draft: req.draft, preamble: fromFormat });
  let proc: WarmProcess = await source.take();
  let dir = proc.dir;
  let cwd = path.join(dir, sub);
  let succeeded = false;
  let passes = 0;
  let lastLog = "";
  let warnings: LogWarning[] = [];
  let bibTool: "bibtex" | "biber" | undefined;

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
  const limitFail = (ending: Ending, what: string): CompileFailure =>
    ending === "timeout"
      ? fail("compile_timeout", `${what} did not finish within the time limit of ${req.timeoutMs} ms (or used up its CPU time).`)
      : fail("output_too_large", `${what} wrote more output than allowed (${cfg.limits.maxOutputFileBytes} bytes per file, ${cfg.limits.maxJobDirBytes} bytes per job).`);

  try {
    await writeInputs(dir, req, cfg);
    let before = await snapshot(dir);
    let bibtexDone: string | undefined;
    let biberDone: string | undefined;
    for (;;) {
      passes++;
      proc.go(go);
      const run = await runToExit(proc.child, proc.exited, dir, deadline, cfg);
      lastLog = await readLog(cwd);
      const parsed = parseLog(lastLog);
      warnings = parsed.warnings;
      if (run.ending !== "exit") return limitFail(run.ending, `Pass ${passes} of ${req.engine}`);
      if (parsed.errors.length > 0 || run.code !== 0) {
        const first: LogError = parsed.errors[0] ?? { message: `${req.engine} stopped with exit code ${run.code ?? run.signal}.` };
        const errors = parsed.errors.length ? parsed.errors : [first];
        if (parsed.missingEnd && first.line === undefined) {
          first.line = lineCount(req.source);
          first.file = mainFile;
        }
        fixMissingFileLine(first, req.source, mainFile);
        // file names in the log are relative to the main file's folder: name them from the project root
        if (sub) for (const e of errors) if (e.file !== undefined && !e.file.startsWith("/")) e.file = path.posix.normalize(path.posix.join(sub, e.file));
        return fail("compile_error", first.message, errors, { line: first.line, file: first.file });
      }
      let after = await snapshot(dir);
      let bibRan = false;

      // bibliography tools, only when the request brought a .bib
      if (hasBib) {
        const bk = await biberKey(cwd);
        const tk = bk ? undefined : await bibtexKey(dir);
        if (bk && bk !== biberDone) {
          let src = await biberSources(cwd);
          if (!src.ok && sub) src = await biberSources(dir); // data sources named from the project root
          if (!src.ok) return fail("compile_error", `biber data source "${src.bad}" is not one of the request's files.`, [{ message: `biber data source not allowed: ${src.bad}`, file: `${MAIN_BASENAME}.bcf` }]);
          const r = await runTool("biber", ["--noconf", "--nolog", MAIN_BASENAME], dir, deadline, cfg, sub);
          if (r.ending !== "exit") return limitFail(r.ending, "biber");
          if (r.code !== 0) return toolFail("biber", r.output);
          biberDone = bk;
          bibRan = true;
          bibTool = "biber";
        } else if (tk && tk !== bibtexDone) {
          const r = await runTool("bibtex", [MAIN_BASENAME], dir, deadline, cfg, sub);
          if (r.ending !== "exit") return limitFail(r.ending, "bibtex");
          if (r.code !== null && r.code >= 2) return toolFail("bibtex", (await readLog(cwd, `${MAIN_BASENAME}.blg`)) || r.output);
          bibtexDone = tk;
          bibRan = true;
          bibTool = "bibtex";
        }
        if (bibRan) after = await snapshot(dir);
      }

      const again = bibRan || needsRerun(before, after, lastLog);
      if (!again || passes >= cfg.limits.maxPasses) break;
      const next = await source.take();
      proc.kill();
      await moveAll(dir, next.dir);
      await removeDir(dir);
      proc = next;
      dir = next.dir;
      cwd = path.join(dir, sub);
      before = after;
    }

    const pdfPath = path.join(cwd, `${MAIN_BASENAME}.pdf`);
    const st = await fs.lstat(pdfPath).catch(() => undefined);
    if (!st || !st.isFile()) return fail("compile_error", "No PDF was produced (the document has no pages).", [{ message: "No pages of output." }]);
    if (st.size > cfg.limits.maxPdfBytes) return fail("output_too_large", `The PDF is ${st.size} bytes; the limit is ${cfg.limits.maxPdfBytes}.`);
    const pdf = await fs.readFile(pdfPath);
    const parsed = parseLog(lastLog);
    succeeded = true;
    return { ok: true, pdf, pages: parsed.pages ?? countPages(pdf), passes, durationMs: Date.now() - started, warnings, bibTool };
  } finally {
    proc.kill();
    await removeDir(dir);
    source.close(succeeded);
  }

  function toolFail(tool: string, output: string): CompileFailure {
    const lines = output.split("\n");
    const errs: LogError[] = [];
    for (let i = 0; i < lines.length; i++) {
      const l = lines[i] ?? "";
      let m: RegExpExecArray | null;
      if ((m = /^ERROR - (.*)$/.exec(l))) errs.push({ message: m[1] ?? "" });
      else if (/^(I couldn't|I found no|Illegal|Sorry|.*---line \d+ of file)/.test(l)) {
        const lm = /---line (\d+) of file (\S+)/.exec(l) ?? /---line (\d+) of file (\S+)/.exec(lines[i + 1] ?? "");
        errs.push({ message: l.trim(), line: lm ? Number(lm[1]) : undefined, file: lm ? lm[2] : undefined });
      }
    }
    const first: LogError = errs[0] ?? { message: `${tool} failed.` };
    if (errs.length === 0) errs.push(first);
    lastLog = output;
    return fail("compile_error", `${tool}: ${first.message}`, errs, { line: first.line, file: first.file });
  }
}

async function runTool(cmd: string, args: string[], dir: string, deadline: number, cfg: Config, sub = ""): Promise<RunOutcome & { output: string }> {
  const child = spawnLimited(cmd, args, { ...spawnOptions(cfg, dir), subdir: sub || undefined });
  child.stdin!.end();
  let output = "";
  const take = (c: Buffer) => {
    if (output.length < 64 * 1024) output += c.toString("utf8");
  };
  child.stdout!.on("data", take);
  child.stderr!.on("data", take);
  const r = await runToExit(child, exitedOf(child), dir, deadline, cfg);
  return { ...r, output };
}

/** Fallback page count straight from the PDF (the log normally has it). */
export function countPages(pdf: Buffer): number {
  const s = pdf.toString("latin1");
  const m = s.match(/\/Type\s*\/Page(?![a-zA-Z])/g);
  return m ? m.length : 0;
}
