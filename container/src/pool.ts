// Pools of pre-started engine processes. Each process has loaded its format and
// waits, in its own fresh job directory, for one line on stdin; it serves one
// pass of one job and is never reused. Pools are refilled in the background.
import { randomBytes } from "node:crypto";
import { promises as fs } from "node:fs";
import path from "node:path";
import type { ChildProcess } from "node:child_process";
import type { Config, Engine } from "./config.ts";
import { engineArgs, jobDirSeen, MAIN_BASENAME, READY_MARKER, spawnLimited, spawnOptions, warmJobname } from "./engine.ts";
import { killGroup, normaliseExit } from "./supervise.ts";
import { Fairness, LOW_PRIORITY, renice } from "./fairness.ts";
import { fontCacheEnv, SANDBOX_FMT } from "./sandbox.ts";
import { texHostPath } from "./texroot.ts";
import { jobsDir, removeTree } from "./workdir.ts";
import { leaseOwner, ownerOf, releaseOwner } from "./uids.ts";
import { WarmDriver } from "./driver-warm.ts";

export interface ExitInfo {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export class WarmProcess {
  readonly engine: Engine;
  readonly dir: string;
  readonly child: ChildProcess;
  readonly ready: Promise<boolean>;
  readonly exited: Promise<ExitInfo>;
  isReady = false;
  isDead = false;
  /** xelatex's PDF driver, started beside it (driver-warm.ts); taken by the job that runs its last pass here. */
  driver: WarmDriver | undefined;
  /** Why it never became ready (exit status and the end of its output), once `ready` is false. */
  failure = "";
  private started = false;

  constructor(engine: Engine, dir: string, child: ChildProcess, startTimeoutMs: number, driver?: WarmDriver) {
    this.engine = engine;
    this.dir = dir;
    this.child = child;
    this.driver = driver;
    this.exited = new Promise((resolve) => {
      child.on("exit", (code, signal) => {
        this.isDead = true;
        resolve(normaliseExit(code, signal));
      });
      child.on("error", () => {
        this.isDead = true;
        resolve({ code: null, signal: null });
      });
    });
    this.ready = new Promise((resolve) => {
      let seen = "";
      let errTail = "";
      const tail = () => (errTail.trim() || seen.trim()).slice(-400).replace(/\s+/g, " ");
      const timer = setTimeout(() => {
        this.failure = `not ready within ${startTimeoutMs} ms: ${tail() || "no output"}`;
        resolve(false);
      }, startTimeoutMs);
      child.stdout!.on("data", (chunk: Buffer) => {
        if (this.isReady) return; // drained and ignored after readiness
        seen = (seen + chunk.toString("latin1")).slice(-4096);
        if (seen.includes(READY_MARKER)) {
          this.isReady = true;
          clearTimeout(timer);
          resolve(true);
        }
      });
      child.stderr!.on("data", (chunk: Buffer) => {
        if (!this.isReady) errTail = (errTail + chunk.toString("latin1")).slice(-4096);
      });
      this.exited.then((e) => {
        clearTimeout(timer);
        if (!this.isReady) this.failure = `exited (${e.signal ?? `code ${e.code}`}) before it was ready: ${tail() || "no output"}`;
        resolve(false);
      });
    });
    child.stdin!.on("error", () => {});
    // an engine that never ran a pass leaves no .xdv for its driver
    void this.exited.then(() => {
      if (!this.started) this.driver?.kill();
    });
  }

  /** Lets the engine run `line` (engine.ts goLine: the main file, options). Returns at once. */
  go(line: string): void {
    if (this.started) throw new Error("process already used");
    if (line.includes("\n")) throw new Error("go line must be one line");
    this.started = true;
    this.child.stdin!.end(`${line}\n`);
  }

  kill(): void {
    killGroup(this.child);
    this.driver?.kill();
  }
}

export interface PoolStats {
  target: number;
  ready: number;
  starting: number;
  spawned: number;
  served: number;
  /** Takes that found no ready process (the job started one of its own). */
  cold: number;
  /** The last failed start, while starts keep failing. */
  lastError?: string;
}

/** The pools did not fill at start-up; the message names the engine and its error. */
export class PoolNotReady extends Error {}

/** A fresh job folder (0700), owned by a uid of its own when the server runs as root (uids.ts). */
export async function makeJobDir(cfg: Config): Promise<string> {
  const dir = path.join(jobsDir(cfg), randomBytes(16).toString("hex"));
  await fs.mkdir(dir, { mode: 0o700 });
  // without a pid namespace (safe mode, sandbox off) nothing ends a job's processes with it
  const owner = leaseOwner(cfg.uids, dir, !cfg.sandbox);
  if (owner) await fs.chown(dir, owner.uid, owner.gid).catch(async (e: unknown) => {
    await fs.rmdir(dir).catch(() => {});
    await releaseOwner(dir);
    throw e;
  });
  return dir;
}

/** Gives `p` (made by the server, inside a job folder) to the folder's uid. */
export async function ownBy(dir: string, p: string): Promise<void> {
  const owner = ownerOf(dir);
  if (owner) await fs.chown(p, owner.uid, owner.gid);
}

/**
 * luaotfload needs a writable cache; a job's own TEXMFVAR starts with symlinks to
 * the read-only caches built at image build time (font names database, font
 * caches), so nothing is regenerated per job and nothing shared can be rewritten.
 */
let sysCache: Promise<string[]> | undefined;
const SYSVAR_CACHE = "/var/lib/texmf/luatex-cache";
function listSysCache(): Promise<string[]> {
  sysCache ??= (async () => {
    const out: string[] = [];
    const walk = async (rel: string) => {
      const entries = await fs.readdir(texHostPath(path.join(SYSVAR_CACHE, rel)), { withFileTypes: true }).catch(() => []);
      for (const e of entries) {
        const r = rel ? `${rel}/${e.name}` : e.name;
        if (e.isDirectory()) await walk(r);
        else if (e.isFile()) out.push(r);
      }
    };
    await walk("");
    return out;
  })();
  return sysCache;
}

export async function prepareLuaCache(dir: string, cfg: Config): Promise<void> {
  const base = path.join(dir, ".texmf-var", "luatex-cache");
  const files = await listSysCache();
  const dirs = new Set<string>([path.join(base, "generic", "names"), path.join(base, "generic", "fonts", "otl")]);
  for (const f of files) dirs.add(path.dirname(path.join(base, f)));
  for (const d of [...dirs].sort()) await fs.mkdir(d, { recursive: true, mode: 0o700 });
  for (const f of files) await fs.symlink(path.join(SYSVAR_CACHE, f), path.join(base, f)).catch(() => {});
  if (ownerOf(dir)) {
    const all = new Set<string>([path.join(dir, ".texmf-var")]);
    for (const d of dirs) for (let x = d; x.startsWith(path.join(dir, ".texmf-var")); x = path.dirname(x)) all.add(x);
    await Promise.all([...all].map((d) => ownBy(dir, d)));
  }
}

export interface ProcessSpec {
  /** Work in this folder of the job directory (the main file's folder), created here. */
  subdir?: string | undefined;
  /** Host path of a format to start from instead of the engine's own (a dumped preamble). */
  fmtFile?: string | undefined;
  /** Shell escape on (the request's shellEscape; sandbox only). */
  shellEscape?: boolean | undefined;
  /** The job's control group caps its processes (no per-uid RLIMIT_NPROC: see spawnLimited). */
  groupCapped?: boolean | undefined;
  /** TeX's job name, when the process is started for one main file (from a preamble format). */
  jobname?: string | undefined;
  /** The job brings fonts of its own (fontconfig is set up at its first font, not ahead: see XETEX_FONT_WARMUP). */
  fontsLater?: boolean | undefined;
  /** Environment added for the job (search paths; `root` is the job folder as the engine sees it). */
  env?: ((root: string) => Record<string, string>) | undefined;
  /** Errors do not stop the engine (the request's haltOnError: false). */
  keepGoing?: boolean | undefined;
}

/** Starts one engine process in a fresh job directory; it loads its format and waits for go(). */
export async function spawnProcess(cfg: Config, engine: Engine, spec: ProcessSpec = {}): Promise<WarmProcess> {
  const dir = await makeJobDir(cfg);
  if (spec.subdir) {
    let cur = dir;
    for (const seg of spec.subdir.split("/")) {
      cur = path.join(cur, seg);
      await fs.mkdir(cur, { mode: 0o700 });
      await ownBy(dir, cur);
    }
  }
  if (engine === "lualatex") await prepareLuaCache(dir, cfg);
  const fmt = spec.fmtFile ? (cfg.sandbox ? SANDBOX_FMT : spec.fmtFile) : undefined;
  const env = { ...fontCacheEnv(cfg), ...spec.env?.(jobDirSeen(dir, cfg.sandbox)) };
  const opts = { ...spawnOptions(cfg, dir), subdir: spec.subdir, fmtFile: spec.fmtFile, shellEscape: spec.shellEscape, groupCapped: spec.groupCapped, env };
  const args = engineArgs(engine, dir, cfg.sandbox, opts.luaSandbox, fmt, spec.shellEscape, spec.jobname, spec.fontsLater);
  // without -halt-on-error TeX goes on after an error in batch mode, as far as it can
  const child = spawnLimited(engine, spec.keepGoing ? args.filter((a) => a !== "-halt-on-error") : args, opts);
  // its driver needs the job's name for its files, and the sandbox to keep its FIFO from the job
  const driver = engine === "xelatex" && cfg.sandbox && spec.jobname ? await WarmDriver.start(cfg, { jobDir: dir, subdir: spec.subdir, base: spec.jobname, env, shellEscape: spec.shellEscape, groupCapped: spec.groupCapped }) : undefined;
  return new WarmProcess(engine, dir, child, 60_000, driver);
}

/** Removes a job directory without following anything its processes left in it (see workdir.ts). */
export async function removeDir(dir: string): Promise<void> {
  // the uid is free for another job only once nothing of this one is left
  await removeTree(dir, () => void releaseOwner(dir)).catch(() => {});
}

/** Ready processes below which the pool refills during jobs while several accounts use it. */
const RESERVE = 2;

export class EnginePool {
  readonly engine: Engine;
  private readonly cfg: Config;
  private readonly target: number;
  private idle: WarmProcess[] = [];
  private startingCount = 0;
  private closed = false;
  private spawned = 0;
  private served = 0;
  private cold = 0;
  private filling = false;
  private readonly busy: () => boolean;
  private readonly starting = new Set<WarmProcess>();
  /** Starts that failed in a row, and the last one's reason. */
  private failures = 0;
  private lastError: string | undefined;
  /** Told of every failed start (Pools.warmUp). */
  onFailure?: (failuresInARow: number, reason: string) => void;

  private readonly fairness: Fairness | undefined;
  /** The job name its processes are started with (they warm up for it: see warmJobname); undefined: any. */
  readonly jobname: string | undefined;

  constructor(engine: Engine, cfg: Config, busy: () => boolean = () => false, fairness?: Fairness) {
    this.engine = engine;
    this.jobname = warmJobname(engine, MAIN_BASENAME);
    this.fairness = fairness;
    this.cfg = cfg;
    this.busy = busy;
    this.target = cfg.poolSize[engine];
  }

  private reserve(): number {
    return Math.max(0, Math.min(RESERVE, this.target - 1));
  }

  /** Starts one engine process in a fresh directory (not added to the pool). */
  async spawnOne(): Promise<WarmProcess> {
    const p = await spawnProcess(this.cfg, this.engine, { jobname: this.jobname });
    this.spawned++;
    p.exited.then(() => {
      this.idle = this.idle.filter((x) => x !== p);
    });
    return p;
  }

  /** Keeps `target` processes started; at most two start at once to leave CPU to jobs. */
  fill(): Promise<void> {
    if (this.filling || this.closed) return Promise.resolve();
    this.filling = true;
    const run = async () => {
      try {
        while (!this.closed && this.idle.length + this.startingCount < this.target) {
          // Refill in the background: while jobs are compiling, starting engines would only
          // steal their CPU, so wait until the pool is empty; but while several accounts use
          // the server, keep the reserve their next compiles will take.
          // (and then not beside a job that has just begun: it is most likely short, and nearly done)
          const wait = () => {
            if (!this.busy()) return false;
            if (!this.fairness?.shared()) return this.idle.length > 0;
            return this.idle.length > this.reserve() || this.fairness?.shortJobRunning() === true;
          };
          while (!this.closed && wait()) await new Promise((r) => setTimeout(r, 10));
          if (this.closed) break;
          const n = Math.min(2, this.target - this.idle.length - this.startingCount);
          const batch: Promise<void>[] = [];
          for (let i = 0; i < n; i++) {
            this.startingCount++;
            batch.push(
              this.spawnOne()
                .then(async (p) => {
                  this.starting.add(p);
                  if (this.closed) p.kill();
                  // its driver's set-up, too, waits while a light job runs
                  const unpause = [p.child, p.driver?.child].map((c) => (c ? this.fairness?.spare(c) : undefined));
                  const ok = await p.ready;
                  for (const u of unpause) u?.();
                  this.starting.delete(p);
                  if (ok && !this.closed) {
                    this.idle.push(p);
                    this.failures = 0;
                    this.lastError = undefined;
                  } else {
                    p.kill();
                    await removeDir(p.dir);
                    if (!this.closed) {
                      this.failed(p.failure);
                      await new Promise((r) => setTimeout(r, 1000));
                    }
                  }
                })
                .catch(async (e: unknown) => {
                  this.failed(`could not start: ${(e as Error).message}`);
                  await new Promise((r) => setTimeout(r, 1000));
                })
                .finally(() => {
                  this.startingCount--;
                }),
            );
          }
          await Promise.all(batch);
        }
      } finally {
        this.filling = false;
      }
    };
    return run();
  }

  private failed(reason: string): void {
    this.failures++;
    this.lastError = reason;
    this.onFailure?.(this.failures, this.lastError);
  }

  /**
   * A ready process if one is idle, else a freshly started one (cold). A `heavy` job (see
   * fairness.ts) takes none: it starts its own, at low priority from the start, so neither its
   * passes nor the refills they would cause (format loads at normal priority) cost the others.
   */
  async take(heavy = false): Promise<WarmProcess> {
    this.served++;
    let p: WarmProcess | undefined;
    if (!heavy) {
      while ((p = this.idle.shift())) {
        if (!p.isDead) break;
        p.kill();
        await removeDir(p.dir);
      }
    }
    setImmediate(() => void this.fill());
    if (p) return p;
    this.cold++;
    const own = await this.spawnOne();
    // a heavy job's own engine loads its format at low priority from the start (its sandbox
    // has not forked yet; the job demotes whatever has meanwhile)
    if (heavy) renice(own.child.pid, LOW_PRIORITY);
    return own;
  }

  /** Whether its processes can run the job of a main file named `base` (without its extension). */
  serves(base: string): boolean {
    return this.jobname === undefined || this.jobname === base;
  }

  stats(): PoolStats {
    const s: PoolStats = { target: this.target, ready: this.idle.length, starting: this.startingCount, spawned: this.spawned, served: this.served, cold: this.cold };
    if (this.lastError) s.lastError = this.lastError;
    return s;
  }

  isWarm(): boolean {
    return this.target === 0 || this.idle.length > 0;
  }

  async close(): Promise<void> {
    this.closed = true;
    const all = [...this.idle, ...this.starting]; // starting ones too: nothing outlives close()
    this.idle = [];
    this.starting.clear();
    for (const p of all) p.kill();
    await Promise.all(all.map(async (p) => {
      await p.exited;
      await removeDir(p.dir);
    }));
  }
}

export class Pools {
  readonly byEngine: Map<Engine, EnginePool>;
  /** Which namespaces run long jobs (their processes yield the CPU and the warm engines). */
  readonly fairness: Fairness;
  /** `busy`: a job is running (or has just answered); see EnginePool.fill. */
  constructor(cfg: Config, busy?: () => boolean, fairness = new Fairness()) {
    this.byEngine = new Map(cfg.engines.map((e) => [e, new EnginePool(e, cfg, busy, fairness)]));
    this.fairness = fairness;
  }
  get(engine: Engine): EnginePool | undefined {
    return this.byEngine.get(engine);
  }
  fillAll(): Promise<void> {
    return Promise.all([...this.byEngine.values()].map((p) => p.fill())).then(() => {});
  }
  /**
   * Fills every pool (call once, at start). Resolves when all are full; rejects with PoolNotReady,
   * naming the engine and its error, as soon as one engine fails `maxFailures` starts in a row (it
   * cannot work: a missing format, an unreadable file) or when `timeoutMs` passes, instead of
   * leaving the caller waiting in silence. The pools keep retrying in the background either way.
   */
  warmUp(timeoutMs: number, maxFailures = 3): Promise<void> {
    const pools = [...this.byEngine.values()];
    return new Promise<void>((resolve, reject) => {
      const done = () => {
        clearTimeout(timer);
        for (const p of pools) p.onFailure = undefined;
      };
      const timer = setTimeout(() => {
        done();
        const state = pools.map((p) => {
          const s = p.stats();
          return `${p.engine}: ${s.ready}/${s.target} ready${s.lastError ? `, last error: ${s.lastError}` : ""}`;
        });
        reject(new PoolNotReady(`engine pools not full within ${timeoutMs} ms (WARM_TIMEOUT_MS): ${state.join("; ")}`));
      }, timeoutMs);
      for (const p of pools) {
        p.onFailure = (n, reason) => {
          if (n < maxFailures) return;
          done();
          reject(new PoolNotReady(`${p.engine} cannot start (${n} attempts in a row failed): ${reason}`));
        };
      }
      this.fillAll().then(() => {
        done();
        this.filled = true;
        resolve();
      }, reject);
    });
  }
  private filled = false;
  /** Every pool has a ready process, and the start-up fill has completed. */
  isWarm(): boolean {
    return this.filled && [...this.byEngine.values()].every((p) => p.isWarm());
  }
  stats(): Record<string, PoolStats> {
    return Object.fromEntries([...this.byEngine].map(([e, p]) => [e, p.stats()]));
  }
  async close(): Promise<void> {
    await Promise.all([...this.byEngine.values()].map((p) => p.close()));
  }
}
