// Configuration of the compile server, read from the environment once at start.
// Every knob is documented in container/README.md.
import os from "node:os";
import path from "node:path";
import { resolveTexRoot } from "./texroot.ts";
import type { UidRange } from "./uids.ts";

export type Engine = "pdflatex" | "xelatex" | "lualatex";
export const ENGINES: readonly Engine[] = ["pdflatex", "xelatex", "lualatex"];

export interface Limits {
  maxRequestBytes: number; // whole HTTP body (JSON)
  maxFiles: number; // entries in files[]
  maxFileBytes: number; // one decoded file (source included)
  maxTotalBytes: number; // all decoded files together
  defaultTimeoutMs: number;
  maxTimeoutMs: number;
  cpuSeconds: number; // RLIMIT_CPU per engine / bib process
  memoryBytes: number; // RLIMIT_AS per engine / bib process
  maxOutputFileBytes: number; // RLIMIT_FSIZE: any single file a process writes
  maxJobDirBytes: number; // the whole job directory, polled
  maxJobFiles: number; // files and directories in the job directory, polled
  maxLogBytes: number; // main.log, polled
  maxPdfBytes: number; // PDF returned
  logTailBytes: number; // log tail in a 422
  maxPasses: number; // LaTeX passes
  /** Requests may turn shell escape on (COMPILE_SHELL_ESCAPE, default on; never without the sandbox). */
  shellEscape: boolean;
  /** RLIMIT_NPROC of a shell-escape job's processes (counts every process of the engine uid). */
  shellEscapeProcesses: number;
  /** Per job in all, where per-job control groups are available (cgroup.ts): processes at once, memory. */
  jobProcesses: number;
  jobMemoryBytes: number;
}

/** Precompiled preambles (preamble.ts). */
export interface PreambleConfig {
  maxEntries: number; // formats kept (0: off)
  maxBytes: number; // all formats together on disk
  maxAgeMs: number; // a format is rebuilt after this long
  warm: number; // engine processes kept started from formats, ready for the next compile
  warmIdleMs: number; // such a process is stopped after this long unused
  maxQueue: number; // dumps waiting
  maxVerifyPdfBytes: number; // larger PDFs are not dumped (the PDF is kept to verify the format)
  dumpTimeoutMs: number;
}

export interface Config {
  port: number;
  host: string;
  engines: Engine[];
  poolSize: Record<Engine, number>;
  maxConcurrent: number; // jobs compiling at once
  maxQueue: number; // jobs waiting for a slot before 503
  maxQueuePerAccount: number; // jobs of one namespace waiting for a slot before its 503
  queueTimeoutMs: number; // how long a job may wait for a slot
  warmTimeoutMs: number; // start-up: every pool full within this, or startServer fails with the reason
  jobRoot: string; // parent of all job directories
  /** Per-job uids (server runs as root): each job folder gets its own uid of this range; else engines run as the server's uid. */
  uids: UidRange | undefined;
  /** COMPILE_SANDBOX: "on" (bwrap; safe mode where it cannot run), "uids" (safe mode), "off" (nothing). */
  sandboxMode: "on" | "uids" | "off";
  /** Every engine/bib process runs in a bubblewrap sandbox (false in safe mode and when off). */
  sandbox: boolean;
  /**
   * Safe mode: no user namespaces, so no bwrap. Jobs are kept apart by their own uids, caps and
   * kpathsea's paranoid paths; shell escape and precompiled preambles are off (see startServer).
   */
  safeMode: boolean;
  /** Per-job control groups: "auto" uses them where the kernel allows, "off" never (COMPILE_CGROUPS). */
  cgroups: "auto" | "off";
  /** The bwrap binary (tests point it elsewhere to exercise the start-up self-check). */
  bwrapPath: string;
  limits: Limits;
  preamble: PreambleConfig;
  logRequests: boolean;
  /**
   * Where bitmap fonts generated from TeX Live's METAFONT sources are kept for every job (mf.ts;
   * MF_FONT_CACHE, default `<jobRoot>/.runtime/fonts`; "off": never generated).
   */
  mfCacheDir: string | undefined;
  /**
   * The TeX root filesystem jobs use (TEX_ROOT; texroot.ts), or undefined for the host's TeX.
   * Only the sandbox can show it to engines: without the sandbox the host's TeX is used.
   */
  texRoot: string | undefined;
}

function int(env: NodeJS.ProcessEnv, name: string, def: number, min = 0): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return def;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < min) throw new Error(`env ${name}=${raw}: expected a number >= ${min}`);
  return Math.floor(n);
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env, overrides: Partial<Config> = {}): Config {
  const cpus = Math.max(1, os.availableParallelism?.() ?? os.cpus().length);
  const engines = (env.ENGINES ?? ENGINES.join(","))
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean) as Engine[];
  for (const e of engines) if (!ENGINES.includes(e)) throw new Error(`env ENGINES: unknown engine ${e}`);
  // pdflatex processes are small (~40 MB) and a job may need 3+ passes; xelatex
  // (~180 MB) and lualatex (~120 MB) idle processes cost more memory.
  const poolAll = env.POOL_SIZE ? int(env, "POOL_SIZE", 1, 0) : undefined;
  const defPdf = poolAll ?? Math.min(8, Math.max(3, 2 * cpus));
  const defPool = poolAll ?? Math.min(4, Math.max(2, cpus));
  const maxConcurrent = int(env, "MAX_CONCURRENT", cpus, 1);
  const isRoot = typeof process.getuid === "function" && process.getuid() === 0;
  const sandboxRaw = (env.COMPILE_SANDBOX ?? "on").trim().toLowerCase() || "on";
  if (sandboxRaw !== "on" && sandboxRaw !== "off" && sandboxRaw !== "uids") throw new Error(`env COMPILE_SANDBOX=${env.COMPILE_SANDBOX}: expected "on", "uids" or "off"`);
  // per-job uids need root (setuid); the range is far from the system's users and from nobody
  const uids = isRoot ? { base: int(env, "ENGINE_UID_BASE", 200_000, 1000), count: int(env, "ENGINE_UIDS", 65_536, 16) } : undefined;
  const shellRaw = (env.COMPILE_SHELL_ESCAPE ?? "on").trim().toLowerCase();
  if (!["on", "off", ""].includes(shellRaw)) throw new Error(`env COMPILE_SHELL_ESCAPE=${env.COMPILE_SHELL_ESCAPE}: expected "on" or "off"`);
  const jobRoot = env.JOB_ROOT || path.join(os.tmpdir(), `texcompile-${process.pid}`);
  const limits: Limits = {
    maxRequestBytes: int(env, "MAX_REQUEST_BYTES", 32 * 1024 * 1024, 1024),
    maxFiles: int(env, "MAX_FILES", 200, 0),
    maxFileBytes: int(env, "MAX_FILE_BYTES", 10 * 1024 * 1024, 1),
    maxTotalBytes: int(env, "MAX_TOTAL_BYTES", 24 * 1024 * 1024, 1),
    defaultTimeoutMs: int(env, "DEFAULT_TIMEOUT_MS", 30_000, 100),
    maxTimeoutMs: int(env, "MAX_TIMEOUT_MS", 60_000, 100),
    cpuSeconds: int(env, "CPU_SECONDS", 60, 1),
    memoryBytes: int(env, "MEMORY_BYTES", 3 * 1024 * 1024 * 1024, 64 * 1024 * 1024),
    maxOutputFileBytes: int(env, "MAX_OUTPUT_FILE_BYTES", 100 * 1024 * 1024, 1024),
    maxJobDirBytes: int(env, "MAX_JOB_DIR_BYTES", 200 * 1024 * 1024, 1024),
    maxJobFiles: int(env, "MAX_JOB_FILES", 1000, 16),
    maxLogBytes: int(env, "MAX_LOG_BYTES", 8 * 1024 * 1024, 64 * 1024),
    maxPdfBytes: int(env, "MAX_PDF_BYTES", 50 * 1024 * 1024, 1024),
    logTailBytes: int(env, "LOG_TAIL_BYTES", 16 * 1024, 256),
    maxPasses: int(env, "MAX_PASSES", 5, 1),
    // programs a document runs are contained by the sandbox only: without it, never (see below)
    shellEscape: shellRaw !== "off",
    shellEscapeProcesses: int(env, "SHELL_ESCAPE_PROCESSES", 1000, 16),
    jobProcesses: int(env, "JOB_PROCESSES", 512, 16),
    jobMemoryBytes: int(env, "JOB_MEMORY_BYTES", 3 * 1024 * 1024 * 1024, 64 * 1024 * 1024),
  };
  const cfg: Config = {
    port: int(env, "PORT", 8080, 0),
    host: env.HOST || "0.0.0.0",
    engines,
    poolSize: {
      pdflatex: int(env, "POOL_SIZE_PDFLATEX", defPdf, 0),
      xelatex: int(env, "POOL_SIZE_XELATEX", defPool, 0),
      lualatex: int(env, "POOL_SIZE_LUALATEX", defPool, 0),
    },
    maxConcurrent,
    maxQueue: int(env, "MAX_QUEUE", maxConcurrent * 4, 0),
    maxQueuePerAccount: 0, // set below, from the final maxQueue
    queueTimeoutMs: int(env, "QUEUE_TIMEOUT_MS", 30_000, 0),
    warmTimeoutMs: int(env, "WARM_TIMEOUT_MS", 60_000, 100),
    jobRoot,
    uids,
    sandboxMode: sandboxRaw,
    sandbox: sandboxRaw === "on",
    safeMode: sandboxRaw === "uids",
    bwrapPath: "/usr/bin/bwrap",
    limits,
    preamble: {
      maxEntries: int(env, "PREAMBLE_CACHE_ENTRIES", 64, 0),
      maxBytes: int(env, "PREAMBLE_CACHE_BYTES", 1024 * 1024 * 1024, 1024 * 1024),
      maxAgeMs: int(env, "PREAMBLE_MAX_AGE_MS", 12 * 3600 * 1000, 1000),
      warm: int(env, "PREAMBLE_WARM", 2, 0),
      warmIdleMs: int(env, "PREAMBLE_WARM_IDLE_MS", 120_000, 1000),
      maxQueue: 4,
      maxVerifyPdfBytes: 8 * 1024 * 1024,
      dumpTimeoutMs: int(env, "PREAMBLE_DUMP_TIMEOUT_MS", 30_000, 1000),
    },
    logRequests: env.LOG_REQUESTS === "1",
    mfCacheDir: env.MF_FONT_CACHE === "off" ? undefined : env.MF_FONT_CACHE || path.join(jobRoot, ".runtime", "fonts"),
    cgroups: (env.COMPILE_CGROUPS ?? "auto").trim().toLowerCase() === "off" ? "off" : "auto",
    texRoot: sandboxRaw === "on" ? resolveTexRoot(env) : undefined,
  };
  const out: Config = {
    ...cfg,
    ...overrides,
    poolSize: { ...cfg.poolSize, ...(overrides.poolSize ?? {}) },
    limits: { ...cfg.limits, ...(overrides.limits ?? {}) },
    preamble: { ...cfg.preamble, ...(overrides.preamble ?? {}) },
  };
  // the default font cache follows an overridden job root
  if (!("mfCacheDir" in overrides) && !env.MF_FONT_CACHE) out.mfCacheDir = path.join(out.jobRoot, ".runtime", "fonts");
  // one account may fill a quarter of the queue: the others can still queue behind it
  out.maxQueuePerAccount = overrides.maxQueuePerAccount ?? int(env, "MAX_QUEUE_PER_ACCOUNT", Math.max(1, Math.floor(out.maxQueue / 4)), 1);
  return withIsolation(out);
}

/**
 * What follows from the isolation in force: programs a document runs are contained by the sandbox
 * only, so without it shell escape is off; in safe mode precompiled preambles are off too (a format
 * would have to be readable by every job's uid).
 */
export function withIsolation(cfg: Config): Config {
  const out = { ...cfg, limits: { ...cfg.limits }, preamble: { ...cfg.preamble } };
  if (!out.sandbox) out.limits.shellEscape = false;
  if (out.safeMode) out.preamble.maxEntries = 0;
  return out;
}
