// Precompiled preambles: after a document compiled, its preamble (everything before
// \begin{document}, with the project files it reads) is dumped into a format in the
// background, the mylatexformat way; the next compile of the same preamble starts the
// engine from that format and skips the preamble. Formats are per namespace (account),
// content-addressed, bounded (count, bytes, age; least recently used go first), built
// in the same sandbox and limits as compiles, and only used after one compile from the
// format gave the same pages and text as the normal compile it was built from.
import { execFile, type ChildProcess } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { promises as fs } from "node:fs";
import path from "node:path";
import type { Config, Engine } from "./config.ts";
import { DRAFT_OPTIONS, LUA_SANDBOX, PLAIN_NAME, spawnLimited, spawnOptions } from "./engine.ts";
import { jobBase } from "./names.ts";
import { closeOf } from "./supervise.ts";
import { BACKGROUND, LOW_PRIORITY, renice } from "./fairness.ts";
import { refusal } from "./preamble-refuse.ts";
import { makeJobDir, prepareLuaCache, removeDir, spawnProcess, type WarmProcess } from "./pool.ts";
import { SANDBOX_JOB_DIR, SANDBOX_LUA } from "./sandbox.ts";
import { texCommand, texHostPath } from "./texroot.ts";
import type { CompileRequest } from "./validate.ts";
import { inFolder, WorkDir } from "./workdir.ts";

const VERSION = "texpool-preamble/v1";
/** A dump that found no free compile slot for this long is dropped (the next compile asks again). */
const MAX_SLOT_WAIT_MS = 60_000;
const SLOT_POLL_MS = 100;
/** The files a preamble reads are scanned (see refusal) up to this many bytes in all; more: not dumped. */
const MAX_DEPS_SCANNED = 512 * 1024;
const BEGIN_DOCUMENT = "\\begin{document}";

/**
 * Longer preambles (in characters) are not precompiled. Real ones are a few KiB; the scan below and
 * the key's hash run on the thread every account shares, on every request.
 */
export const MAX_PREAMBLE_CHARS = 256 * 1024;

/** The preamble of `source`: the text before the line holding `\begin{document}`, if the format path can take it. */
export function preambleOf(source: string): string | undefined {
  // searched in the first MAX_PREAMBLE_CHARS only (a slice is a view, not a copy)
  const at = source.slice(0, MAX_PREAMBLE_CHARS + BEGIN_DOCUMENT.length).indexOf(BEGIN_DOCUMENT);
  if (at < 0) return undefined;
  const lineStart = source.lastIndexOf("\n", at) + 1;
  // the scanner re-runs the whole line of \begin{document}: nothing of the preamble may share it
  if (source.slice(lineStart, at).trim() !== "") return undefined;
  const pre = source.slice(0, lineStart);
  if (!pre.includes("\\documentclass")) return undefined;
  // a preamble without packages loads in a few milliseconds: a format would not pay for its dump
  if (!pre.includes("\\usepackage") && !pre.includes("\\RequirePackage")) return undefined;
  // refused (preamble-refuse.ts): anything that writes, changes how the main file is read or
  // drives the dump, under any spelling. A preamble that reads files the request did not bring
  // (generated ones) is refused after the dump (recorder), one whose files are refused likewise,
  // and any other difference by the verification compile.
  if (refusal(pre) !== undefined) return undefined;
  return pre;
}

type State = "dumping" | "ready" | "bad";

interface Entry {
  key: string;
  state: State;
  /** Project files the preamble read, with their sha256 (the main file's preamble is in the key). */
  deps: Array<[string, string]>;
  fmtFile?: string;
  bytes: number;
  createdAt: number;
  lastUsed: number;
  warm?: WarmProcess;
  warmTimer?: NodeJS.Timeout;
}

export interface PreambleUse {
  key: string;
  fmtFile: string;
  /** A process already started from the format, if one was kept warm. */
  warm?: WarmProcess;
}

export interface PreambleStats {
  entries: number;
  ready: number;
  bad: number;
  bytes: number;
  warm: number;
  queued: number;
  dumping: boolean;
  dumped: number;
  hits: number;
  /** Why the last format was not made or not kept (operators: which documents miss out). */
  lastRefusal?: string;
}

/** What the background work needs from job.ts (passed in to keep the modules acyclic). */
export interface PreambleRunner {
  writeInputs(dir: string, req: CompileRequest, cfg: Config): Promise<void>;
  /** Compiles `req` from the format only (no fallback), running no tool (bibtex, makeindex...); the PDF or undefined. */
  compileWithFormat(req: CompileRequest, use: PreambleUse): Promise<{ pdf: Buffer; pages: number } | undefined>;
}

/**
 * A compile slot of `namespace` for background work, if one is free and no request waits for
 * one (Gate.tryAcquire); the release.
 */
export type SlotFor = (namespace: string) => (() => void) | undefined;

interface Pending {
  req: CompileRequest;
  key: string;
  pdf: Buffer;
  pages: number;
}

const sha256 = (data: string | Buffer) => createHash("sha256").update(data).digest("hex");

const ENGINE_BINARY: Record<Engine, string> = { pdflatex: "pdftex", xelatex: "xetex", lualatex: "luahbtex" };

const run = (cmd: string, args: string[]) => {
  const [file, argv] = texCommand(cmd, args);
  return new Promise<string>((resolve) => execFile(file, argv, { encoding: "utf8", timeout: 10_000 }, (_err, stdout) => resolve(stdout ?? "")));
};

/** Identity of the installed TeX: engine version line and the engine's own format file (size, mtime). */
async function texVersion(engine: Engine): Promise<string> {
  const [v, fmt] = await Promise.all([run(engine, ["--version"]), run("kpsewhich", [`-engine=${ENGINE_BINARY[engine]}`, `${engine}.fmt`])]);
  const fmtPath = fmt.trim();
  const st = fmtPath ? await fs.stat(texHostPath(fmtPath)).catch(() => undefined) : undefined;
  return `${v.split("\n")[0]}|${fmtPath}|${st ? `${st.size}:${st.mtimeMs}` : ""}`;
}

/** The first "! ..." line of a log (at most 64 KiB read from its end). */
async function firstError(work: WorkDir, log: string): Promise<string> {
  const buf = await work.readFile(log, 64 * 1024, true);
  if (!buf) return "no log";
  const line = buf.toString("utf8").split("\n").find((l) => l.startsWith("!"));
  return (line ?? "no error in the log").slice(0, 200);
}

/** A dump's recorder file (.fls) longer than this is refused (it lists the files TeX read). */
const MAX_FLS_BYTES = 4 * 1024 * 1024;

export class Preambles {
  private readonly cfg: Config;
  private readonly dir: string;
  private readonly entries = new Map<string, Entry>();
  private readonly versions = new Map<Engine, string>();
  private readonly keys = new WeakMap<CompileRequest, string | undefined>();
  private queue: Pending[] = [];
  private working = false;
  private closed = false;
  private dumped = 0;
  private hits = 0;
  private lastRefusal: string | undefined;
  private runner: PreambleRunner | undefined;
  private readonly slotFor: SlotFor;
  private idleWaiters: Array<() => void> = [];
  /** Aborted at close: a dump or text extraction still running is killed. */
  private readonly stopping = new AbortController();

  constructor(cfg: Config, slotFor: SlotFor = () => () => {}) {
    this.cfg = cfg;
    this.slotFor = slotFor;
    this.dir = path.join(cfg.jobRoot, "preambles");
    // the TeX version is part of every key; until it is known, no format is made or used
    if (this.enabled) {
      for (const e of cfg.engines) {
        void texVersion(e).then((v) => {
          if (v.split("|")[0]) this.versions.set(e, v);
        });
      }
    }
  }

  setRunner(r: PreambleRunner): void {
    this.runner = r;
  }

  get enabled(): boolean {
    return this.cfg.preamble.maxEntries > 0;
  }

  /** The lookup key of a request, or undefined when it cannot use a format. */
  keyOf(req: CompileRequest): string | undefined {
    // pdflatex only. XeTeX cannot dump a format holding OpenType fonts, and every LaTeX class
    // loads one. LuaTeX dumps one, but without luaotfload's Lua-side state: on the test corpus a
    // fontspec document from such a format placed text differently once its body was edited,
    // though the format had reproduced the original.
    if (!this.enabled || req.namespace === undefined || req.engine !== "pdflatex") return undefined;
    // the go line gives a format's scanner a name TeX reads as it is (see goLine)
    if (!PLAIN_NAME.test(path.posix.basename(req.mainPath))) return undefined;
    // a latexmkrc's search folders are set when an engine starts, not in a format's process
    if (req.project && Object.values(req.project.paths).some((p) => p.length > 0)) return undefined;
    const version = this.versions.get(req.engine);
    if (version === undefined) return undefined; // not yet known (just started): asked again after the compile
    // asked up to three times per request: the preamble is scanned and hashed once
    if (this.keys.has(req)) return this.keys.get(req);
    const pre = preambleOf(req.source);
    const key = pre === undefined ? undefined : sha256(JSON.stringify([VERSION, req.namespace, req.engine, req.draft, req.mainPath, version, pre]));
    this.keys.set(req, key);
    return key;
  }

  private depsMatch(e: Entry, req: CompileRequest): boolean {
    for (const [p, hash] of e.deps) {
      const f = req.files.find((x) => x.path === p);
      if (!f || sha256(f.data) !== hash) return false;
    }
    return true;
  }

  /** A verified format for this request, if there is one. */
  lookup(req: CompileRequest, now = Date.now()): PreambleUse | undefined {
    const key = this.keyOf(req);
    if (!key) return undefined;
    const e = this.entries.get(key);
    if (!e || e.state !== "ready" || !e.fmtFile) return undefined;
    if (now - e.createdAt > this.cfg.preamble.maxAgeMs) {
      void this.drop(e);
      return undefined;
    }
    if (!this.depsMatch(e, req)) return undefined;
    e.lastUsed = now;
    this.hits++;
    const warm = e.warm;
    e.warm = undefined;
    if (e.warmTimer) clearTimeout(e.warmTimer);
    return { key, fmtFile: e.fmtFile, ...(warm && !warm.isDead ? { warm } : {}) };
  }

  /** A format compile failed where the normal path succeeded: never use this format again. */
  reject(key: string): void {
    const e = this.entries.get(key);
    if (!e) return;
    this.killWarm(e);
    if (e.fmtFile) void fs.rm(e.fmtFile, { force: true });
    e.fmtFile = undefined;
    e.bytes = 0;
    e.state = "bad";
  }

  /** An unused process started from a format: keep it for the next compile of that preamble. */
  keepWarm(key: string, proc: WarmProcess): void {
    const e = this.entries.get(key);
    if (!e || e.state !== "ready" || this.closed || this.cfg.preamble.warm === 0) {
      proc.kill();
      void proc.exited.then(() => removeDir(proc.dir));
      return;
    }
    this.killWarm(e);
    e.warm = proc;
    e.warmTimer = setTimeout(() => this.killWarm(e), this.cfg.preamble.warmIdleMs);
    e.warmTimer.unref();
    // at most `warm` processes kept, the most recently used entries' first
    const warm = [...this.entries.values()].filter((x) => x.warm).sort((a, b) => b.lastUsed - a.lastUsed);
    for (const x of warm.slice(this.cfg.preamble.warm)) this.killWarm(x);
  }

  private killWarm(e: Entry): void {
    if (e.warmTimer) clearTimeout(e.warmTimer);
    e.warmTimer = undefined;
    const p = e.warm;
    e.warm = undefined;
    if (p) {
      p.kill();
      void p.exited.then(() => removeDir(p.dir));
    }
  }

  /**
   * After a successful compile on the normal path: queue a dump of its preamble unless
   * one exists, is being made or was refused. The PDF is kept to verify the format.
   */
  afterCompile(req: CompileRequest, result: { pdf: Buffer; pages: number; tools?: readonly string[] }): void {
    if (this.closed) return;
    const key = this.keyOf(req);
    if (!key) return;
    // the verification compiles the whole document again, and no tool may run in the background
    // (biber alone can take seconds): a document that needs bibtex, makeindex... is left alone
    if (result.tools && result.tools.length > 0) {
      this.lastRefusal = `${req.engine}: the document runs ${result.tools.join(", ")}`;
      return;
    }
    const e = this.entries.get(key);
    if (e && (e.state === "dumping" || e.state === "bad" || (e.state === "ready" && this.depsMatch(e, req)))) return;
    if (result.pdf.length > this.cfg.preamble.maxVerifyPdfBytes) return;
    if (this.queue.some((q) => q.key === key)) return;
    if (this.queue.length >= this.cfg.preamble.maxQueue) this.queue.shift(); // the newest wish wins
    this.queue.push({ req, key, pdf: result.pdf, pages: result.pages });
    void this.work();
  }

  /** Resolves when no dump is queued or running (tests, benchmark). */
  idle(): Promise<void> {
    if (!this.working && this.queue.length === 0) return Promise.resolve();
    return new Promise((r) => this.idleWaiters.push(r));
  }

  /**
   * Dumps one queued preamble at a time, each in a compile slot of its account taken only when
   * one is free and no request waits (so background work never goes beyond MAX_CONCURRENT nor
   * before a request), at the lowest CPU priority. A dump that finds no slot for
   * MAX_SLOT_WAIT_MS is dropped: the account's next compile of it queues it again.
   */
  private async work(): Promise<void> {
    if (this.working) return;
    this.working = true;
    try {
      let since = Date.now();
      while (!this.closed && this.queue.length > 0) {
        const next = this.queue[0]!;
        const release = this.slotFor(next.req.namespace ?? "");
        if (!release) {
          if (Date.now() - since > MAX_SLOT_WAIT_MS) {
            this.queue.shift();
            this.lastRefusal = `${next.req.engine}: no compile slot was free for ${MAX_SLOT_WAIT_MS / 1000} s`;
            since = Date.now();
          } else await new Promise((r) => setTimeout(r, SLOT_POLL_MS));
          continue;
        }
        this.queue.shift();
        try {
          await this.build(next);
        } catch (err) {
          console.error("preamble dump failed unexpectedly:", err);
        } finally {
          release();
        }
        since = Date.now();
      }
    } finally {
      this.working = false;
      const ws = this.idleWaiters;
      this.idleWaiters = [];
      for (const w of ws) w();
    }
  }

  private async build(job: Pending): Promise<void> {
    const runner = this.runner;
    if (!runner) return;
    const now = Date.now();
    const old = this.entries.get(job.key);
    if (old) await this.drop(old);
    const e: Entry = { key: job.key, state: "dumping", deps: [], bytes: 0, createdAt: now, lastUsed: now };
    this.entries.set(job.key, e);
    const made = await this.dump(job.req, runner);
    if (typeof made === "string" || this.closed) {
      e.state = "bad";
      if (typeof made === "string") this.lastRefusal = `${job.req.engine}: ${made}`;
      return;
    }
    e.deps = made.deps;
    e.fmtFile = made.fmtFile;
    e.bytes = made.bytes;
    // verification: the same document from the format must give the same pages and text
    const use: PreambleUse = { key: job.key, fmtFile: made.fmtFile };
    const got = await runner.compileWithFormat(job.req, use).catch(() => undefined);
    const same = got !== undefined && got.pages === job.pages && (await this.sameText(got.pdf, job.pdf));
    if (!same || this.closed) {
      this.lastRefusal = `${job.req.engine}: ${got === undefined ? "the compile from the format failed" : "the compile from the format gave another PDF"}`;
      this.reject(job.key);
      return;
    }
    e.state = "ready";
    this.dumped++;
    await this.evict();
    // the author is likely to compile again soon: have a process ready
    if (this.cfg.preamble.warm > 0 && e.fmtFile) {
      const sub = path.posix.dirname(job.req.mainPath);
      const p = await spawnProcess(this.cfg, job.req.engine, { subdir: sub === "." ? undefined : sub, fmtFile: e.fmtFile, jobname: jobBase(job.req.mainPath) }).catch(() => undefined);
      if (p) {
        const ok = await p.ready;
        if (ok) this.keepWarm(job.key, p);
        else {
          p.kill();
          await removeDir(p.dir);
        }
      }
    }
  }

  /** Dumps the format in a fresh job directory, sandboxed; else why not. */
  private async dump(req: CompileRequest, runner: PreambleRunner): Promise<{ fmtFile: string; deps: Array<[string, string]>; bytes: number } | string> {
    const cfg = this.cfg;
    const dir = await makeJobDir(cfg);
    try {
      await runner.writeInputs(dir, req, cfg);
      if (req.engine === "lualatex") await prepareLuaCache(dir, cfg);
      const sub = path.posix.dirname(req.mainPath) === "." ? "" : path.posix.dirname(req.mainPath);
      const mainFile = path.posix.basename(req.mainPath);
      const jobDir = cfg.sandbox ? SANDBOX_JOB_DIR : dir;
      const lua = req.engine === "lualatex" ? `\\directlua{TEXPOOL_JOBDIR="${jobDir}" dofile("${cfg.sandbox ? SANDBOX_LUA : LUA_SANDBOX}")}` : "";
      // mylatexformat dumps at \begin{document}. Its last line \input's the main file; our \input
      // wrapper runs first: the preamble is read with @ as other (as without a format), and
      // xelatex skips the font preloading (XeTeX cannot dump OpenType fonts). Our \dump
      // wrapper keeps its preamble scanner out of \everyjob: the go line calls it (engine.ts).
      const driver =
        lua +
        (req.draft ? DRAFT_OPTIONS : "") +
        "\\catcode`\\@=11 \\let\\texpool@dump\\dump \\def\\dump{\\global\\let\\texpoolscan\\MYLATEX@scanpreamble" +
        "\\global\\let\\MYLATEX@scanpreamble\\relax\\global\\let\\texpoolinput\\@@input\\texpool@dump}" +
        "\\let\\texpool@input\\input \\def\\input{\\let\\input\\texpool@input" +
        (req.engine === "xelatex" ? "\\let\\MYLATEX@fontpreloading\\relax" : "") +
        "\\catcode`\\@=12 \\input}" +
        `\\texpool@input mylatexformat.ltx ${mainFile}`;
      // the job name the compile from this format will have: a preamble may use \jobname
      const base = jobBase(mainFile);
      const args = ["-ini", `-jobname=${base}`, "-interaction=batchmode", "-halt-on-error", "-recorder", "-no-shell-escape"];
      if (req.engine === "lualatex") args.push("--nosocket");
      args.push(`&${req.engine}`, driver);
      const child = spawnLimited(req.engine, args, { ...spawnOptions(cfg, dir), subdir: sub || undefined });
      const code = await this.background(child, cfg.preamble.dumpTimeoutMs);
      // the dump's files are read through handles: its Lua may have moved folders around
      const work = new WorkDir(dir);
      if (code !== 0) return `the dump stopped (exit ${code}): ${await firstError(work, inFolder(sub, `${base}.log`))}`;
      const fls = await work.readFile(inFolder(sub, `${base}.fls`), MAX_FLS_BYTES + 1);
      const deps = fls && fls.length <= MAX_FLS_BYTES ? this.readDeps(fls.toString("utf8"), dir, sub, req) : undefined;
      if (!deps) return "the preamble reads files the request did not bring";
      const refused = this.refusedDep(deps.map(([p]) => p), req);
      if (refused) return refused;
      await fs.mkdir(this.dir, { recursive: true, mode: 0o711 });
      const fmtFile = path.join(this.dir, `${randomBytes(16).toString("hex")}.fmt`);
      // a copy owned by the server, read-only for everyone: no engine can change it
      const bytes = await work.copyOut(inFolder(sub, `${base}.fmt`), fmtFile, cfg.preamble.maxBytes);
      if (bytes === undefined) return "no usable format file";
      await fs.chmod(fmtFile, 0o444);
      return { fmtFile, deps, bytes };
    } finally {
      await removeDir(dir);
    }
  }

  /**
   * Project files the dump read (recorder INPUT lines inside the job directory), each
   * with its hash; undefined when it read a file the request did not bring (generated).
   */
  private readDeps(text: string, dir: string, sub: string, req: CompileRequest): Array<[string, string]> | undefined {
    const root = (this.cfg.sandbox ? SANDBOX_JOB_DIR : dir) + "/";
    const deps = new Map<string, string>();
    const files = new Map(req.files.map((f) => [f.path, f] as const));
    for (const line of text.split("\n")) {
      if (!line.startsWith("INPUT ")) continue;
      const p = line.slice(6).trim();
      let rel: string;
      if (p.startsWith("/")) {
        if (!p.startsWith(root)) continue; // the TeX installation
        rel = path.posix.normalize(p.slice(root.length));
      } else rel = path.posix.normalize(path.posix.join(sub, p));
      if (rel === req.mainPath || rel.startsWith(".texmf-var/")) continue; // the main file; lualatex's font caches
      // hashed once: a preamble can open one large file thousands of times (one line each)
      if (deps.has(rel)) continue;
      const f = files.get(rel);
      if (!f) return undefined;
      deps.set(rel, sha256(f.data));
    }
    return [...deps].sort((a, b) => (a[0] < b[0] ? -1 : 1));
  }

  /**
   * Why the project files the preamble read may not be dumped: what the preamble itself may not
   * do (see refusal), they may not do either. Scanned on the server's thread: MAX_DEPS_SCANNED in all.
   */
  private refusedDep(paths: string[], req: CompileRequest): string | undefined {
    let budget = MAX_DEPS_SCANNED;
    for (const p of paths) {
      const f = req.files.find((x) => x.path === p);
      if (!f) return `the preamble reads ${p}, which the request did not bring`;
      budget -= f.data.length;
      if (budget < 0) return `the files the preamble reads are over ${MAX_DEPS_SCANNED} bytes`;
      const why = refusal(f.data.toString("latin1"));
      if (why) return `the preamble reads ${p}, which uses ${why}`;
    }
    return undefined;
  }

  /** Same text (pdftotext, run in the sandbox: the PDFs come from user documents). */
  private async sameText(a: Buffer, b: Buffer): Promise<boolean> {
    const [ta, tb] = await Promise.all([this.pdfText(a), this.pdfText(b)]);
    return ta !== undefined && ta === tb;
  }

  private async pdfText(pdf: Buffer): Promise<string | undefined> {
    const dir = await makeJobDir(this.cfg);
    try {
      const file = path.join(dir, "in.pdf");
      await fs.writeFile(file, pdf, { mode: 0o644 });
      const child = spawnLimited("pdftotext", ["in.pdf", "-"], spawnOptions(this.cfg, dir));
      let out = "";
      let size = 0;
      child.stdout!.on("data", (c: Buffer) => {
        size += c.length;
        if (size <= 16 * 1024 * 1024) out += c.toString("utf8");
      });
      const code = await this.background(child, 30_000);
      return code === 0 && size <= 16 * 1024 * 1024 ? out : undefined;
    } finally {
      await removeDir(dir);
    }
  }

  /**
   * Runs a background process to its end: at the lowest CPU priority from its start (set before
   * bwrap forks the sandbox, which inherits it; what starts later is demoted too), killed after
   * `timeoutMs` or when the server closes. Its exit code, null when it failed to start or was killed.
   */
  private async background(child: ChildProcess, timeoutMs: number): Promise<number | null> {
    renice(child.pid, LOW_PRIORITY);
    BACKGROUND.settle(child);
    child.stdin!.end();
    if (!child.stdout!.listenerCount("data")) child.stdout!.resume();
    child.stderr!.resume();
    return (await closeOf(child, timeoutMs, this.stopping.signal)).code;
  }

  private drop(e: Entry): Promise<void> {
    this.killWarm(e);
    this.entries.delete(e.key);
    return e.fmtFile ? fs.rm(e.fmtFile, { force: true }) : Promise.resolve();
  }

  /** Least recently used first, until within the count and byte budgets. */
  private async evict(): Promise<void> {
    const gone: Promise<void>[] = [];
    const all = [...this.entries.values()].filter((e) => e.state !== "dumping").sort((a, b) => a.lastUsed - b.lastUsed);
    let bytes = all.reduce((s, e) => s + e.bytes, 0);
    let count = this.entries.size;
    for (const e of all) {
      if (count <= this.cfg.preamble.maxEntries && bytes <= this.cfg.preamble.maxBytes) break;
      gone.push(this.drop(e));
      count--;
      bytes -= e.bytes;
    }
    await Promise.all(gone);
  }

  stats(): PreambleStats {
    const all = [...this.entries.values()];
    return {
      entries: all.length,
      ready: all.filter((e) => e.state === "ready").length,
      bad: all.filter((e) => e.state === "bad").length,
      bytes: all.reduce((s, e) => s + e.bytes, 0),
      warm: all.filter((e) => e.warm).length,
      queued: this.queue.length,
      dumping: this.working,
      dumped: this.dumped,
      hits: this.hits,
      ...(this.lastRefusal ? { lastRefusal: this.lastRefusal } : {}),
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    this.queue = [];
    this.stopping.abort();
    for (const e of this.entries.values()) this.killWarm(e);
    await this.idle();
    await fs.rm(this.dir, { recursive: true, force: true }).catch(() => {});
  }
}
