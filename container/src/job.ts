// One compile job: write the files into a warm process's directory, run as many
// passes (and bibtex/biber runs) as the document needs, collect the PDF or the
// errors, and remove every directory the job used.
import { randomBytes } from "node:crypto";
import { constants, promises as fs } from "node:fs";
import path from "node:path";
import type { Config } from "./config.ts";
import { DRIVER_DIR, DRIVER_MAP, driverArgs, fontMaps, leanMap, writeLeanDriver } from "./driver.ts";
import type { WarmDriver } from "./driver-warm.ts";
import { engineEnv, goLine, jobDirSeen, spawnLimited, spawnOptions, warmJobname } from "./engine.ts";
import { jobBase } from "./names.ts";
import { searchEnv } from "./project.ts";
import { FONTCONFIG, FONTCONFIG_NAME, fontEnv } from "./fonts.ts";
import { fontCacheEnv } from "./sandbox.ts";
import { MAX_FONTS_PER_JOB, missingFont, type FontMaker } from "./mf.ts";
import { exitOf, runToExit, type Bounds, type Ending, type RunOutcome } from "./supervise.ts";
import { BACKGROUND, LOW_PRIORITY, renice } from "./fairness.ts";
import { DRIVER_FAILED, firstCause, logTail, parseLog, parseToolOutput, type LogError, type LogWarning } from "./log-parser.ts";
import { needsRerun, planTools, snapshot, toolCommand, type Tool } from "./passes.ts";
import { ownerOf } from "./uids.ts";
import { ownBy, removeDir, spawnProcess, type EnginePool, type Pools, type ProcessSpec, type WarmProcess } from "./pool.ts";
import type { PreambleUse, Preambles } from "./preamble.ts";
import type { CompileRequest } from "./validate.ts";
import { inFolder, WorkDir, type JobCaps } from "./workdir.ts";
import { makeOutput, type Output } from "./outputs.ts";
import type { Cgroups, JobCgroup } from "./cgroup.ts";
import type { JobEvents } from "./job-events.ts";
import { followLog } from "./log-follow.ts";

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
  /** Whether a precompiled preamble was used ("hit"), or none existed yet ("miss"). */
  preamble?: "hit" | "miss";
  /** What the request asked for instead of the PDF (outputs.ts). */
  output?: Output;
  /** Errors TeX went on after (haltOnError: false); they are among the warnings too. */
  errorCount?: number;
}

export interface CompileFailure {
  ok: false;
  /** Which cap an output_too_large hit, when it was a count or the log. */
  limit?: "files" | "log_bytes";
  max?: number;
  code: "compile_error" | "compile_timeout" | "output_too_large" | "page_out_of_range";
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

/** What bounds every process of one job: its deadline, the server's shutdown, its CPU priority, its group. */
interface RunLimits extends Bounds {
  /** The job's control group (processes and memory of the whole job), where available. */
  group?: JobCgroup | undefined;
  /** The job's progress (passes, tools, output), for an async job someone may follow. */
  events?: JobEvents | undefined;
}

/**
 * What the server's thread reads of a log and of main.tex: the last 2 MiB of a log (TeX's
 * errors are at its end; a longer log loses early warnings only), the first 256 KiB of
 * main.tex when looking for the line that asked for a missing file (where preambles are; see firstCause).
 * Scans are linear, so these bound each job's cost on the thread every account shares.
 */
const MAX_LOG_PARSE = 2 * 1024 * 1024;
/** Not carried to the next pass: each process has its own font cache folder. */
const SKIP_ON_MOVE: ReadonlySet<string> = new Set([".texmf-var"]);

/** The caps the folder watch applies to every process of a job; `log`: the job's log, from the job folder. */
function folderCaps(cfg: Config, log: string): JobCaps {
  return { maxEntries: cfg.limits.maxJobFiles, maxBytes: cfg.limits.maxJobDirBytes, maxLogBytes: cfg.limits.maxLogBytes, logName: log };
}

/**
 * Moves an engine process into the job's group once it is blocked on its go line (it has loaded
 * its format and forks nothing until then), so the whole sandbox is in the group before it runs
 * anything of the job's.
 */
async function adopt(p: WarmProcess, run: RunLimits): Promise<void> {
  if (!run.group) return;
  await p.ready;
  await run.group.adopt(p.child.pid);
}

/** What a pass left for the next one becomes the next engine's uid's (uids.ts): its own stays readable to it. */
async function handOver(from: string, to: string): Promise<void> {
  const was = ownerOf(from);
  const now = ownerOf(to);
  if (was && now && was.uid !== now.uid) await new WorkDir(to).handOver(was.uid, now);
}

/** The main file's folder in the project ("" for the root), its name and TeX's job name for it. */
export function mainParts(mainPath: string): { sub: string; mainFile: string; base: string } {
  const i = mainPath.lastIndexOf("/");
  const mainFile = i < 0 ? mainPath : mainPath.slice(i + 1);
  return { sub: i < 0 ? "" : mainPath.slice(0, i), mainFile, base: jobBase(mainFile) };
}

export async function writeInputs(dir: string, req: CompileRequest, cfg: Config): Promise<void> {
  const own = (p: string) => ownBy(dir, p);
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
  if (fontsOf(req).length > 0) await write(FONTCONFIG_NAME, FONTCONFIG);
}

/** The last `max` bytes of log `name` of the main file's folder `sub` (TeX's errors are at its end). */
async function readLog(work: WorkDir, sub: string, name: string, max = MAX_LOG_PARSE): Promise<string> {
  const buf = await work.readFile(inFolder(sub, name), max, true);
  return buf ? buf.toString("utf8") : "";
}

/** How a job's tools run: in the main file's folder, with the job's log capped and its search paths. */
interface ToolContext {
  sub: string;
  /** The job's log, from the job folder. */
  log: string;
  /** Environment added for the job (`root`: the job folder as its processes see it). */
  env: (root: string) => Record<string, string>;
}

/** Whether the job's engines need an environment of their own (warm pool processes have the default one). */
const ownEnv = (req: CompileRequest) => !!req.project && (Object.values(req.project.paths).some((p) => p.length > 0) || fontsOf(req).length > 0);
/** The project's fonts, for the engines that load OpenType fonts. */
const fontsOf = (req: CompileRequest) => (req.engine === "pdflatex" ? [] : (req.project?.fonts ?? []));

/**
 * The environment a job adds to its processes': the project's search folders, and with a main file
 * in a subfolder, kpathsea's restricted mode instead of paranoid for names, so `..` from there
 * (`\input{../../layers/init}`) reaches the project root. Only in the sandbox, where nothing but the
 * job's folder and the system's public files is there to reach; shell escape has its own settings.
 */
function jobEnv(cfg: Config, req: CompileRequest, root: string): Record<string, string> {
  const { sub } = mainParts(req.mainPath);
  const env = { ...searchEnv(req.project?.paths ?? { TEXINPUTS: [], BIBINPUTS: [], BSTINPUTS: [] }, root, sub), ...fontEnv(fontsOf(req), root) };
  if (cfg.sandbox && sub && !req.shellEscape) Object.assign(env, { openin_any: "r", openout_any: "r" });
  return env;
}

/** The next pass's folder lacks what the job made: it replaced a folder of its own meanwhile. */
const FOLDER_REPLACED = "The document replaced its main file's folder (or a folder above it) while it ran, so its files could not be carried to the next pass.";

/** The job was stopped from outside (the server shuts down, or its caller hung up); it has no answer of its own. */
export class JobAborted extends Error {
  constructor() {
    super("The compile server is shutting down.");
  }
}

/** Where the engine processes of one job's passes come from. */
interface ProcessSource {
  /** `heavy`: the job runs long (fairness.ts); the pool keeps its last engines for others. */
  take(heavy: boolean): Promise<WarmProcess>;
  /** The job is over; `ok`: it succeeded (a spare process may then be kept). */
  close(ok: boolean): void;
}

/** The warm pool: engines started in a job directory's root from the engine's own format. */
function poolSource(pool: EnginePool): ProcessSource {
  return { take: (heavy) => pool.take(heavy), close: () => {} };
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
    async take(heavy) {
      let p = pending;
      pending = undefined;
      if (!p && next) p = await next;
      // a heavy job's next process loads its format at low priority too
      next = start().then((n) => (heavy && n && renice(n.child.pid, LOW_PRIORITY), n));
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
export async function runJob(req: CompileRequest, pools: Pools, cfg: Config, signal?: AbortSignal, preambles?: Preambles, cgroups?: Cgroups, fonts?: FontMaker, events?: JobEvents): Promise<CompileResult> {
  const pool = pools.get(req.engine);
  if (!pool) throw new Error(`engine ${req.engine} not enabled`);
  const job = pools.fairness.begin(req.namespace);
  // processes are capped for shell-escape jobs, which may start any program; the others start only
  // the tools the server runs, and skip the pids move's cost (see cgroup.ts)
  const caps = { processes: req.shellEscape ? cfg.limits.jobProcesses : undefined, memoryBytes: cfg.limits.jobMemoryBytes };
  const group = await cgroups?.create(randomBytes(8).toString("hex"), caps);
  try {
    const run = { deadline: Date.now() + req.timeoutMs, signal, prio: job, group, events };
    let r = await compileOnce(req, pool, cfg, run, preambles);
    // a font that exists only as METAFONT source: made from TeX Live's source, then compiled again
    for (let made = 0; fonts && !r.ok && r.code === "compile_error" && made < MAX_FONTS_PER_JOB; made++) {
      const want = missingFont(r.message);
      if (!want || !(await fonts.ensure(want, run.deadline - Date.now()))) break;
      const again = await compileOnce(req, pool, cfg, run, preambles);
      r = again; // its duration counts from the job's start
    }
    const ignored = req.project?.ignored ?? [];
    // the first few: the list names what to fix, it is not a log
    if (ignored.length) r.warnings = [...ignored.slice(0, 20).map((m): LogWarning => ({ kind: "project", message: `${req.project?.rc}: ignored ${m}` })), ...r.warnings];
    return r;
  } finally {
    job.end();
    // killing leftovers and removing the group waits for processes to exit: not on the answer's path
    void group?.remove();
  }
}

async function compileOnce(req: CompileRequest, pool: EnginePool, cfg: Config, run: RunLimits, preambles?: Preambles): Promise<CompileResult> {
  const started = run.deadline - req.timeoutMs;
  const { sub, base } = mainParts(req.mainPath);
  // the warm pool's engines have shell escape off (it is a command-line choice): a shell-escape
  // job starts its own, and skips precompiled preambles (their processes have it off too)
  const env = (root: string) => jobEnv(cfg, req, root);
  const keepGoing = req.haltOnError === false;
  const named = { jobname: warmJobname(req.engine, base), fontsLater: fontsOf(req).length > 0 };
  if (req.shellEscape) return runPasses(req, dedicatedSource(cfg, req.engine, { subdir: sub || undefined, shellEscape: true, groupCapped: run.group !== undefined, env, keepGoing, ...named }), cfg, started, false, run);
  // the warm pool's engines and preamble formats halt on the first error (a command-line choice)
  if (keepGoing) return runPasses(req, dedicatedSource(cfg, req.engine, { subdir: sub || undefined, env, keepGoing, ...named }), cfg, started, false, run);
  // the warm pool's engines run in the job's root with the default search path (and, for xelatex, main.tex's job name)
  const normal = () => (sub || ownEnv(req) || !pool.serves(base) ? dedicatedSource(cfg, req.engine, { subdir: sub || undefined, env, ...named }) : poolSource(pool));
  const use = preambles?.lookup(req);
  if (use) {
    const r = await runPasses(req, formatSource(cfg, req, use, preambles), cfg, started, true, run);
    if (r.ok) return { ...r, preamble: "hit" };
    if (r.code !== "compile_error") return r;
    const again = await runPasses(req, normal(), cfg, started, false, run);
    if (again.ok) preambles?.reject(use.key);
    return again;
  }
  const r = await runPasses(req, normal(), cfg, started, false, run);
  if (r.ok && preambles?.keyOf(req)) {
    // the format is verified on the PDF alone: no page images or SyncTeX in the background
    const { output: _output, ...pdfOnly } = req;
    preambles.afterCompile(pdfOnly, r);
    return { ...r, preamble: "miss" };
  }
  return r;
}

function formatSource(cfg: Config, req: CompileRequest, use: PreambleUse, preambles?: Preambles): ProcessSource {
  const { sub, base } = mainParts(req.mainPath);
  // without the cache (verifying a new format) a spare process has nowhere to go: it is discarded
  const spare = preambles ? (p: WarmProcess) => preambles.keepWarm(use.key, p) : undefined;
  return dedicatedSource(cfg, req.engine, { subdir: sub || undefined, fmtFile: use.fmtFile, jobname: base, env: (root) => jobEnv(cfg, req, root) }, use.warm, spare);
}

/**
 * Compiles `req` from a dumped preamble only (the verification of a new format). `noTools`: a
 * document that would run bibtex, biber, makeindex... fails instead (background work runs none).
 */
export async function compileWithFormat(req: CompileRequest, use: PreambleUse, cfg: Config, signal?: AbortSignal, opts: { noTools?: boolean } = {}): Promise<{ pdf: Buffer; pages: number } | undefined> {
  const started = Date.now();
  const r = await runPasses(req, formatSource(cfg, req, use), cfg, started, true, { deadline: started + req.timeoutMs, signal, prio: BACKGROUND }, opts.noTools === true);
  return r.ok ? { pdf: r.pdf, pages: r.pages } : undefined;
}

async function runPasses(req: CompileRequest, source: ProcessSource, cfg: Config, started: number, fromFormat: boolean, run: RunLimits, noTools = false): Promise<CompileResult> {
  const hasBib = req.files.some((f) => f.path.endsWith(".bib"));
  const { sub, mainFile, base } = mainParts(req.mainPath);
  const tool: ToolContext = { sub, log: inFolder(sub, `${base}.log`), env: (root) => jobEnv(cfg, req, root) };
  // \synctex is a primitive of all three engines: set before the document, it writes <base>.synctex.gz
  const go = (req.output?.synctex ? "\\synctex=1" : "") + goLine({ mainFile, draft: req.draft, preamble: fromFormat });
  let proc: WarmProcess = await source.take(run.prio.heavy());
  await adopt(proc, run);
  run.prio.settle(proc.child);
  let dir = proc.dir;
  let work = new WorkDir(dir);
  /** The next pass's process, from the moment it is taken until it is `proc`: killed with the job otherwise. */
  let next: WarmProcess | undefined;
  let succeeded = false;
  let passes = 0;
  let lastLog = "";
  let warnings: LogWarning[] = [];
  let pages: number | undefined;
  let bibTool: "bibtex" | "biber" | undefined;
  const toolsRun = new Set<Tool>();
  /** haltOnError: false: the last pass's errors, and its failure should no PDF come of it. */
  let softErrors: LogError[] = [];
  let softFailure: CompileFailure | undefined;

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
        if (run.group?.oomKilled()) return fail("compile_error", `${what} used more than ${cfg.limits.jobMemoryBytes} bytes of memory (the job's processes in all) and was stopped.`);
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
    let before = await snapshot(work);
    const toolsDone = new Map<string, string>();
    for (;;) {
      passes++;
      run.events?.emit("pass", { pass: passes, engine: req.engine });
      // the engines run in batch mode (nothing on the terminal): the log file is what is followed
      const follow = run.events && followLog(work, tool.log, run.events);
      proc.go(go);
      const pass = await runToExit(proc.child, proc.exited, work, folderCaps(cfg, tool.log), run);
      await follow?.stop();
      run.events?.emit("pass-end", { pass: passes, exitCode: pass.code });
      if (pass.ending !== "exit") {
        // stopped from outside: only the tail is answered, the log is not parsed
        lastLog = await readLog(work, sub, `${base}.log`, 2 * cfg.limits.logTailBytes);
        return limitFail(pass.ending, `Pass ${passes} of ${req.engine}`);
      }
      lastLog = await readLog(work, sub, `${base}.log`);
      const parsed = parseLog(lastLog);
      warnings = parsed.warnings;
      pages = parsed.pages;
      if (parsed.errors.length > 0 || pass.code !== 0) {
        const { first, errors } = firstCause(parsed, req.source, mainFile, `${req.engine} stopped with exit code ${pass.code ?? pass.signal}.`);
        if (parsed.missingEnd && first.file === "main.tex") first.file = mainFile;
        // file names in the log are relative to the main file's folder: name them from the project root
        if (sub) for (const e of errors) if (e.file !== undefined && !e.file.startsWith("/")) e.file = path.posix.normalize(path.posix.join(sub, e.file));
        const message = req.shellEscape ? first.message : shellEscapeHint(first.message);
        const failure = fail("compile_error", message, errors, { line: first.line, file: first.file });
        if (req.haltOnError !== false) return failure;
        softErrors = errors;
        softFailure = failure;
      } else softErrors = [];
      let after = await snapshot(work);

      // bibtex/biber (only when the request brought a .bib), makeindex for indexes,
      // glossaries and nomenclature: each only when its input changed
      let toolRan = false;
      for (let round = 0; round < 2; round++) {
        const plan = await planTools(work, lastLog, toolsDone, hasBib, sub, { base, makeindex: req.project ? req.project.makeindex : [] });
        if (!plan.ok) return fail("compile_error", plan.message, [{ message: plan.message, file: plan.file }], { file: plan.file });
        if (noTools && plan.runs.length > 0) return fail("compile_error", `${plan.runs[0]!.tool} would run (tools are not run here).`);
        for (const t of plan.runs) {
          const [cmd, args] = toolCommand(t);
          run.events?.emit("tool", { tool: t.tool });
          const r = await runTool(cmd, args, work, cfg, run, tool);
          if (r.ending !== "exit") return limitFail(r.ending, t.tool);
          // bibtex: 1 means warnings only
          if (r.code !== 0 && !(t.tool === "bibtex" && r.code === 1)) return toolFail(t.tool, (t.logFile ? await readLog(work, sub, t.logFile) : "") || r.output);
          toolsDone.set(t.id, t.key);
          if (t.tool === "bibtex" || t.tool === "biber") bibTool = t.tool;
          toolsRun.add(t.tool);
        }
        toolRan ||= plan.runs.length > 0;
        // splitindex wrote the raw indexes of splitidx: make them now rather than after another pass
        if (!plan.runs.some((t) => t.tool === "splitindex")) break;
      }
      if (toolRan) after = await snapshot(work);

      const again = toolRan || needsRerun(before, after, lastLog);
      if (!again || passes >= cfg.limits.maxPasses) break;
      next = await source.take(run.prio.heavy());
      await adopt(next, run);
      run.prio.settle(next.child);
      proc.kill();
      await proc.exited;
      // through handles, never by path: the job may have swapped any folder of its own for a link
      const carried = await work.moveAllTo(new WorkDir(next.dir), SKIP_ON_MOVE);
      await handOver(dir, next.dir);
      await removeDir(dir);
      proc = next;
      next = undefined;
      dir = proc.dir;
      work = new WorkDir(dir);
      if (!carried) return fail("compile_error", FOLDER_REPLACED, [{ message: FOLDER_REPLACED }]);
      before = after;
    }

    if (req.engine === "xelatex") {
      run.events?.emit("tool", { tool: "xdvipdfmx" });
      const warm = proc.driver;
      proc.driver = undefined;
      const d = await runDriver(work, tool, base, cfg, run, req.shellEscape === true, warm);
      if (d.ending !== "exit") return limitFail(d.ending, "The PDF driver (xdvipdfmx)");
      if (d.code !== 0) {
        lastLog = `${lastLog}\n${d.output}`;
        const reason = d.output.split("\n").find((l) => l.includes("fatal"))?.trim();
        return fail("compile_error", DRIVER_FAILED, [{ message: reason ? `${DRIVER_FAILED} (${reason})` : DRIVER_FAILED }]);
      }
    }

    const pdfName = inFolder(sub, `${base}.pdf`);
    const size = await work.fileSize(pdfName);
    const noPdf = () => softFailure ?? fail("compile_error", "No PDF was produced (the document has no pages).", [{ message: "No pages of output." }]);
    if (size === undefined) return noPdf();
    if (size > cfg.limits.maxPdfBytes) return fail("output_too_large", `The PDF is ${size} bytes; the limit is ${cfg.limits.maxPdfBytes}.`);
    const pdf = await work.readFile(pdfName, cfg.limits.maxPdfBytes);
    if (!pdf) return noPdf();
    const n = pages ?? countPages(pdf);
    let output: Output | undefined;
    if (req.output && req.output.kind !== "pdf") {
      const o = await makeOutput(req.output, { work, sub, base, pdf, pages: n, maxBytes: cfg.limits.maxPdfBytes, maxLogBytes: cfg.limits.maxLogBytes, run: (cmd, args) => runTool(cmd, args, work, cfg, run, tool) });
      if (!o.ok) return o.ending ? limitFail(o.ending, o.message) : fail(o.code === "limit" ? "compile_error" : o.code, o.message);
      output = o.output;
    }
    succeeded = true;
    const soft = softErrors.map((e): LogWarning => ({ ...e, kind: "error" }));
    const extra = { ...(output ? { output } : {}), ...(soft.length ? { errorCount: soft.length } : {}) };
    return { ok: true, pdf, pages: n, passes, durationMs: Date.now() - started, warnings: [...soft, ...warnings], bibTool, tools: [...toolsRun], ...extra };
  } finally {
    next?.kill();
    if (next) void next.exited.then(() => removeDir(next!.dir));
    proc.kill();
    await removeDir(dir);
    source.close(succeeded);
  }

  function toolFail(tool: string, output: string): CompileFailure {
    const errs = parseToolOutput(output);
    const first: LogError = errs[0] ?? { message: `${tool} failed.` };
    if (errs.length === 0) errs.push(first);
    lastLog = output;
    return fail("compile_error", `${tool}: ${first.message}`, errs, { line: first.line, file: first.file });
  }
}

/**
 * xelatex's PDF driver on the last pass's main.xdv (see driver.ts): with the job's own lean
 * font map when it can have one, and when that fails, once more with the installation's maps.
 */
async function runDriver(work: WorkDir, tool: ToolContext, base: string, cfg: Config, run: RunLimits, shellEscape: boolean, warm?: WarmDriver): Promise<RunOutcome & { output: string }> {
  const dir = work.host;
  const sub = tool.sub;
  const xdv = `${base}.xdv`;
  const pdf = `${base}.pdf`;
  const own = (p: string) => ownBy(dir, p);
  const maps = await fontMaps(engineEnv(cfg.jobRoot));
  if (warm) {
    // the .xdv is read through a handle of the main file's folder, never through a link
    const map = maps && (await work.inDir(sub, (fd) => leanMap(`/proc/self/fd/${fd}/${xdv}`, maps)));
    if (map !== undefined && maps && (await warm.begin(map, maps.leanCfg, run.group))) {
      const r = await runToExit(warm.child, warm.exited, work, folderCaps(cfg, tool.log), run);
      if (r.ending !== "exit" || r.code === 0) return { ...r, output: warm.output };
      // a failed lean run: once more with the installation's configuration
      return runTool("xdvipdfmx", driverArgs(xdv, pdf), work, cfg, run, tool, undefined, shellEscape);
    }
    warm.kill(); // not ready (nothing of the job's reached it), or the job needs the installation's maps
  }
  const lean = await work.inDir(sub, (fd) => writeLeanDriver(dir, `/proc/self/fd/${fd}/${xdv}`, maps, own));
  if (lean === true) {
    const seen = path.posix.join(jobDirSeen(dir, cfg.sandbox), DRIVER_DIR);
    // an empty last component: kpathsea's default path follows (dvipdfmx.cfg's `i` includes)
    const r = await runTool("xdvipdfmx", driverArgs(xdv, pdf, `${seen}/${DRIVER_MAP}`), work, cfg, run, tool, { DVIPDFMXINPUTS: `${seen}:` }, shellEscape);
    if (r.ending !== "exit" || r.code === 0) return r;
  }
  return runTool("xdvipdfmx", driverArgs(xdv, pdf), work, cfg, run, tool, undefined, shellEscape);
}

/** `env` is added to the engine environment; `shellEscape`: the environment of an engine with the request's shell escape (xelatex's driver). */
async function runTool(cmd: string, args: string[], work: WorkDir, cfg: Config, run: RunLimits, tool: ToolContext, env?: Record<string, string>, shellEscape = false): Promise<RunOutcome & { output: string }> {
  const held = run.group !== undefined;
  const sub = tool.sub;
  const all = { ...fontCacheEnv(cfg), ...tool.env(jobDirSeen(work.host, cfg.sandbox)), ...env };
  const child = spawnLimited(cmd, args, { ...spawnOptions(cfg, work.host), subdir: sub || undefined, env: all, shellEscape, held, groupCapped: held });
  if (held) {
    // into the job's group before it can start anything, then let it run
    await run.group!.adopt(child.pid);
    child.stdin!.on("error", () => {});
    child.stdin!.end("\n");
  } else child.stdin!.end();
  let output = "";
  const take = (c: Buffer) => {
    if (output.length < 64 * 1024) output += c.toString("utf8");
    run.events?.output(c);
  };
  child.stdout!.on("data", take);
  child.stderr!.on("data", take);
  const r = await runToExit(child, exitOf(child), work, folderCaps(cfg, tool.log), run);
  return { ...r, output };
}

/**
 * Packages that need to run a program say so ("You must invoke LaTeX with the -shell-escape
 * flag", minted) or fail on its missing output (an EPS figure epstopdf did not convert).
 */
export function shellEscapeHint(message: string): string {
  const needs = message.includes("-shell-escape") || message.includes("shell escape") || message.includes("-eps-converted-to.pdf");
  return needs ? `${message} The document runs a program: set "shellEscape": true in the request to allow it (in the sandbox).` : message;
}

/** Fallback page count straight from the PDF (the log normally has it). */
export function countPages(pdf: Buffer): number {
  const s = pdf.toString("latin1");
  const m = s.match(/\/Type\s*\/Page(?![a-zA-Z])/g);
  return m ? m.length : 0;
}
