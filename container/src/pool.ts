// Pools of pre-started engine processes. Each process has loaded its format and
// waits, in its own fresh job directory, for one line on stdin; it serves one
// pass of one job and is never reused. Pools are refilled in the background.
import { randomBytes } from "node:crypto";
import { promises as fs } from "node:fs";
import path from "node:path";
import type { ChildProcess } from "node:child_process";
import type { Config, Engine } from "./config.ts";
import { engineArgs, killGroup, normaliseExit, READY_MARKER, spawnLimited, spawnOptions } from "./engine.ts";
import { SANDBOX_FMT } from "./sandbox.ts";

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
  /** Why it never became ready (exit status and the end of its output), once `ready` is false. */
  failure = "";
  private started = false;

  constructor(engine: Engine, dir: string, child: ChildProcess, startTimeoutMs: number) {
    this.engine = engine;
    this.dir = dir;
    this.child = child;
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
  }
}

export interface PoolStats {
  target: number;
  ready: number;
  starting: number;
  spawned: number;
  served: number;
  /** Takes that found no ready process (the job waited for one to start). */
  cold: number;
  /** The last failed start, while starts keep failing. */
  lastError?: string;
}

/** The pools did not fill at start-up; the message names the engine and its error. */
export class PoolNotReady extends Error {}

/** The pool closed (the server is shutting down) while a job waited for an engine. */
export class PoolClosed extends Error {}

/** Processes starting at once to fill a pool (two cores' worth). */
const MAX_STARTS = 2;
/**
 * Fairness between accounts: each take is charged 1 plus the job's input in MiB (what the
 * server itself spends on a request grows with its size), and the charges decay with this time
 * constant (ms). While another account is active too, the account charged most recently is
 * "heavy": it does not get the last RESERVE ready processes (it waits for a start instead),
 * and among jobs waiting for a start the lightest account is served first. Back-to-back jobs of
 * one account then cannot leave another account only cold starts.
 */
const RECENT_TAU_MS = 3_000;
const RESERVE = 1;
/** Another account counts as active while its decayed charge is at least this. */
const ACTIVE_MIN = 0.5;
const MAX_ACCOUNTS = 1_000;

interface Waiter {
  account: string;
  resolve: (p: WarmProcess) => void;
  reject: (e: Error) => void;
}

export async function makeJobDir(cfg: Config): Promise<string> {
  const dir = path.join(cfg.jobRoot, randomBytes(16).toString("hex"));
  await fs.mkdir(dir, { mode: 0o700 });
  if (cfg.engineUid !== undefined) await fs.chown(dir, cfg.engineUid, cfg.engineGid ?? cfg.engineUid);
  return dir;
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
      const entries = await fs.readdir(path.join(SYSVAR_CACHE, rel), { withFileTypes: true }).catch(() => []);
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
  if (cfg.engineUid !== undefined) {
    const uid = cfg.engineUid;
    const gid = cfg.engineGid ?? uid;
    const all = new Set<string>([path.join(dir, ".texmf-var")]);
    for (const d of dirs) for (let x = d; x.startsWith(path.join(dir, ".texmf-var")); x = path.dirname(x)) all.add(x);
    await Promise.all([...all].map((d) => fs.chown(d, uid, gid)));
  }
}

export interface ProcessSpec {
  /** Work in this folder of the job directory (the main file's folder), created here. */
  subdir?: string | undefined;
  /** Host path of a format to start from instead of the engine's own (a dumped preamble). */
  fmtFile?: string | undefined;
}

/** Starts one engine process in a fresh job directory; it loads its format and waits for go(). */
export async function spawnProcess(cfg: Config, engine: Engine, spec: ProcessSpec = {}): Promise<WarmProcess> {
  const dir = await makeJobDir(cfg);
  if (spec.subdir) {
    let cur = dir;
    for (const seg of spec.subdir.split("/")) {
      cur = path.join(cur, seg);
      await fs.mkdir(cur, { mode: 0o700 });
      if (cfg.engineUid !== undefined) await fs.chown(cur, cfg.engineUid, cfg.engineGid ?? cfg.engineUid);
    }
  }
  if (engine === "lualatex") await prepareLuaCache(dir, cfg);
  const fmt = spec.fmtFile ? (cfg.sandbox ? SANDBOX_FMT : spec.fmtFile) : undefined;
  const opts = { ...spawnOptions(cfg, dir), subdir: spec.subdir, fmtFile: spec.fmtFile };
  const child = spawnLimited(engine, engineArgs(engine, dir, cfg.sandbox, opts.luaSandbox, fmt), opts);
  return new WarmProcess(engine, dir, child, 60_000);
}

export async function removeDir(dir: string): Promise<void> {
  await fs.rm(dir, { recursive: true, force: true, maxRetries: 3 }).catch(() => {});
}

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
  /** Jobs waiting for a process that is starting, one per start at most. */
  private waiters: Waiter[] = [];
  /** Per account, its recent takes (decaying): the lightest waiting account is served first. */
  private recent = new Map<string, { score: number; at: number }>();

  constructor(engine: Engine, cfg: Config, busy: () => boolean = () => false) {
    this.engine = engine;
    this.cfg = cfg;
    this.busy = busy;
    this.target = cfg.poolSize[engine];
  }

  /** Starts one engine process in a fresh directory (not added to the pool). */
  async spawnOne(): Promise<WarmProcess> {
    const p = await spawnProcess(this.cfg, this.engine);
    this.spawned++;
    p.exited.then(() => {
      this.idle = this.idle.filter((x) => x !== p);
    });
    return p;
  }

  /**
   * Keeps `target` processes started, at most MAX_STARTS at once (a job waiting for a process
   * may add one). Resolves when the pool is full and no start is under way.
   */
  fill(): Promise<void> {
    if (this.filling || this.closed) return Promise.resolve();
    this.filling = true;
    const run = async () => {
      try {
        while (!this.closed) {
          if (this.idle.length + this.startingCount >= this.target) {
            if (this.startingCount === 0) break;
            await this.nextStartDone();
          } else if (this.busy() && this.idle.length > 0 && this.waiters.length === 0) {
            // Refill in the background: while jobs are compiling, starting engines would
            // only steal their CPU, so wait unless this pool has run dry or a job waits.
            await new Promise((r) => setTimeout(r, 10));
          } else if (this.startingCount >= MAX_STARTS) {
            await this.nextStartDone();
          } else this.startOne();
        }
      } finally {
        this.filling = false;
      }
    };
    return run();
  }

  /** Starts one process for the pool: ready, it goes to a waiting job or the idle list. */
  private startOne(): void {
    this.startingCount++;
    void this.spawnOne()
      .then(async (p) => {
        this.starting.add(p);
        if (this.closed) p.kill();
        const ok = await p.ready;
        this.starting.delete(p);
        if (ok && !this.closed) {
          this.deliver(p);
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
        this.rescueWaiters();
        for (const w of this.startWatchers.splice(0)) w();
      });
  }

  private readonly startWatchers: Array<() => void> = [];
  private nextStartDone(): Promise<void> {
    return new Promise((r) => this.startWatchers.push(r));
  }

  private failed(reason: string): void {
    this.failures++;
    this.lastError = reason;
    this.onFailure?.(this.failures, this.lastError);
  }

  /**
   * A ready process if one is idle, else a freshly started one (cold). While another account is
   * active too (see RESERVE), a heavy account leaves the last RESERVE ready ones to others, and
   * a job that finds none waits for a process that is starting instead of adding a start of its
   * own (see deliver: the lightest account is served first). `account`: the request's namespace
   * ("" for none); `cost`: its charge (1 + input MiB).
   */
  async take(account = "", cost = 1): Promise<WarmProcess> {
    this.served++;
    const others = this.othersActive(account);
    const heavy = others.length > 0 && others.every((w) => w < this.weight(account));
    this.noteTake(account, cost);
    let p: WarmProcess | undefined;
    while (this.idle.length > (heavy ? RESERVE : 0) && (p = this.idle.shift())) {
      if (!p.isDead) break;
      await removeDir(p.dir);
      p = undefined;
    }
    setImmediate(() => void this.fill());
    if (p) return p;
    if (this.closed) throw new PoolClosed(`${this.engine} pool closed`);
    this.cold++;
    if (others.length === 0) return this.spawnOne();
    // every waiting job has a start of its own under way (the pool's, or this one)
    if (this.startingCount <= this.waiters.length) this.startOne();
    return new Promise<WarmProcess>((resolve, reject) => this.waiters.push({ account, resolve, reject }));
  }

  /**
   * A process that became ready: to the lightest waiting job, unless that job's account is
   * heavy and the reserve is short (then it is kept, and the job waits for another start).
   */
  private deliver(p: WarmProcess): void {
    let best = -1;
    for (let i = 0; i < this.waiters.length; i++) if (best < 0 || this.weight(this.waiters[i]!.account) < this.weight(this.waiters[best]!.account)) best = i;
    if (best < 0 || (this.idle.length < RESERVE && this.isHeavy(this.waiters[best]!.account))) {
      this.idle.push(p);
      // the waiting jobs still need a start each; this one's is released after deliver
      if (this.startingCount - 1 < this.waiters.length) this.startOne();
      return;
    }
    const [w] = this.waiters.splice(best, 1);
    w!.resolve(p);
  }

  /** A start failed: waiters it would have served get a cold start of their own. */
  private rescueWaiters(): void {
    while (this.waiters.length > this.startingCount) {
      const w = this.waiters.pop()!;
      if (this.closed) w.reject(new PoolClosed(`${this.engine} pool closed`));
      else this.spawnOne().then(w.resolve, w.reject);
    }
  }

  private weight(account: string, now = Date.now()): number {
    const r = this.recent.get(account);
    return r ? r.score * Math.exp(-(now - r.at) / RECENT_TAU_MS) : 0;
  }

  /** The charges of the other accounts active now. */
  private othersActive(account: string, now = Date.now()): number[] {
    const out: number[] = [];
    for (const a of this.recent.keys()) {
      if (a === account) continue;
      const w = this.weight(a, now);
      if (w >= ACTIVE_MIN) out.push(w);
    }
    return out;
  }

  /** Charged more than every other account active now, while another one is active too. */
  isHeavy(account: string, now = Date.now()): boolean {
    const mine = this.weight(account, now);
    const others = this.othersActive(account, now);
    return others.length > 0 && others.every((w) => w < mine);
  }

  private noteTake(account: string, cost: number): void {
    const now = Date.now();
    this.recent.set(account, { score: this.weight(account, now) + cost, at: now });
    if (this.recent.size > MAX_ACCOUNTS) {
      // keep the map bounded: forget accounts whose count has decayed (or, failing that, the oldest)
      for (const [a] of this.recent) if (this.weight(a, now) < 0.05) this.recent.delete(a);
      if (this.recent.size > MAX_ACCOUNTS) this.recent.delete(this.recent.keys().next().value!);
    }
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
    for (const w of this.waiters.splice(0)) w.reject(new PoolClosed(`${this.engine} pool closed`));
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
  constructor(cfg: Config, busy?: () => boolean) {
    this.byEngine = new Map(cfg.engines.map((e) => [e, new EnginePool(e, cfg, busy)]));
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
