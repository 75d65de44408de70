// Fairness between the accounts (namespaces) that share one compile server.
//
// A namespace that has kept the server busy without a break for more than `streakMs`
// (jobs back to back, or one long job), or for more than `dutyMax` of the recent past
// (a moving average over about `dutyMs`: pauses between its requests do not reset it),
// or that began `burst` jobs within `burstMs` (short jobs back to back drain the pool long
// before a streak shows), is heavy while another namespace that is not has been active
// within `activeMs`. A heavy namespace's processes run at the lowest
// CPU priority (nice 19), and it takes no warm engines from the pools, so the other
// account's next compile neither waits for the CPU nor starts cold. A demoted process
// still gets all the CPU nobody else wants: alone on the server, or beside other heavy
// namespaces only, nobody is demoted. Raising a nice value needs no privilege: this works
// as root and as a plain user.
//
// Priority alone leaves a short job sharing two cores with the others' engines, their
// kernel work and the pools' refills. So a light job (of a namespace that is not heavy)
// also stops (SIGSTOP) the processes of other namespaces' long or heavy jobs and of engines
// being started for later, while it runs and for PAUSE_MAX_MS at most; a job is stopped for
// pauseBudgetMs in all at most, however many light jobs overlap.
import { readFileSync, promises as fs } from "node:fs";
import os from "node:os";
import type { ChildProcess } from "node:child_process";

export const LOW_PRIORITY = 19;
/** Processes one demotion visits at most (a sandbox holds bwrap, its init and the engine; shell escape a few more). */
const MAX_TREE = 256;
/** How often a running process of a namespace that is not heavy is looked at again. */
const RECHECK_MS = 200;

export interface FairnessOptions {
  /** Busy this long without a break: heavy. */
  streakMs: number;
  /** A pause shorter than this (a client sending its next request) does not break a streak. */
  gapMs: number;
  /** Had a job within this long: active. */
  activeMs: number;
  /** This many jobs begun within burstMs: heavy. */
  burst: number;
  burstMs: number;
  /** Busy more than this share of the time (moving average, time constant dutyMs): heavy. */
  dutyMax: number;
  dutyMs: number;
  /** A job is paused for this long in all at most (so a stream of newcomers cannot starve it). */
  pauseBudgetMs: number;
  /** CPUs: a light job pauses jobs that are merely long only when more want to run than this. */
  cores: number;
}

export const DEFAULT_FAIRNESS: FairnessOptions = { streakMs: 1_000, gapMs: 250, activeMs: 10_000, burst: 3, burstMs: 800, dutyMax: 0.7, dutyMs: 2_000, pauseBudgetMs: 2_000, cores: os.availableParallelism() };

/** One job's view of its namespace. */
export interface JobPriority {
  /** Demote this job's processes, and keep the pool's last engines from it. */
  heavy(): boolean;
  /** `child` runs for this job: demoted as soon as the namespace is heavy. Returns the stop. */
  watch(child: ChildProcess): () => void;
  /** This job took `child` for its next pass (perhaps still loading its format): demoted at once if heavy. */
  settle(child: ChildProcess): void;
}

export interface Job extends JobPriority {
  /** The job is over (call once). */
  end(): void;
}

interface Namespace {
  inflight: number;
  /** When the current busy streak began. */
  since: number;
  /** When its last job ended. */
  lastEnd: number;
  /** When its last `burst` jobs began, oldest first. */
  begins: number[];
  /** Share of the time it was busy (moving average) as of `dutyAt`. */
  duty: number;
  dutyAt: number;
}

/** Background work (verifying a dumped preamble): always at low priority. */
export const BACKGROUND: JobPriority = {
  heavy: () => true,
  watch(child) {
    BACKGROUND.settle(child);
    return () => {};
  },
  settle(child) {
    if (child.pid !== undefined) void reniceTree(child.pid);
  },
};

/** A light job holds other jobs' processes stopped for at most this long. */
export const PAUSE_MAX_MS = 400;
/** A job running longer than this is paused while another namespace's light job runs. */
export const PREEMPT_AFTER_MS = 150;

/** One running job, as pausing sees it. */
interface Running {
  ns: string;
  begun: number;
  /** Its processes (each sandbox's outer process), while they run. */
  procs: Set<ChildProcess>;
  /** The light jobs holding it stopped, each by its own token: stopped while not empty. */
  holds: Set<object>;
  /** Time spent stopped before the current stop, and since when it is stopped now. */
  pausedMs: number;
  pausedAt: number;
  /** Continues it once its pause budget is spent, however many light jobs still hold it. */
  budget?: NodeJS.Timeout | undefined;
}

export class Fairness {
  private readonly spaces = new Map<string, Namespace>();
  private readonly opts: FairnessOptions;
  private demoted = 0;
  /** Engines the pools start for later jobs: paused, as a long job is, while a light job runs. */
  private readonly spares: Running = { ns: "", begun: -Infinity, procs: new Set(), holds: new Set(), pausedMs: 0, pausedAt: 0 };
  private readonly running = new Set<Running>([this.spares]);
  private pauses = 0;

  constructor(opts: Partial<FairnessOptions> = {}) {
    this.opts = { ...DEFAULT_FAIRNESS, ...opts };
  }

  /** Brings the moving average of `s` up to `now` (call before its inflight count changes). */
  private dutyNow(s: Namespace, now: number): number {
    const k = Math.exp(-Math.max(0, now - s.dutyAt) / this.opts.dutyMs);
    s.duty = s.duty * k + (s.inflight > 0 ? 1 - k : 0);
    s.dutyAt = now;
    return s.duty;
  }

  private busyStreak(s: Namespace, now: number): boolean {
    const busy = s.inflight > 0 || now - s.lastEnd <= this.opts.gapMs;
    if (busy && now - s.since > this.opts.streakMs) return true;
    if (this.dutyNow(s, now) > this.opts.dutyMax) return true;
    return s.begins.length >= this.opts.burst && now - s.begins[0]! <= this.opts.burstMs;
  }

  private active(s: Namespace, now: number): boolean {
    return s.inflight > 0 || now - s.lastEnd < this.opts.activeMs;
  }

  isHeavy(ns: string, now = Date.now()): boolean {
    const me = this.spaces.get(ns);
    if (!me || !this.busyStreak(me, now)) return false;
    for (const [other, s] of this.spaces) {
      if (other === ns) continue;
      if (!this.active(s, now)) this.spaces.delete(other); // forgotten once idle: the map stays small
      else if (!this.busyStreak(s, now)) return true;
    }
    return false;
  }

  /** A job of a namespace that is not heavy is running, or ended within `graceMs`. */
  lightBusy(graceMs: number, now = Date.now()): boolean {
    for (const [ns, s] of this.spaces) if ((s.inflight > 0 || now - s.lastEnd < graceMs) && !this.isHeavy(ns, now)) return true;
    return false;
  }

  /** A light job younger than PREEMPT_AFTER_MS is running (a hello world, most likely, nearly done). */
  shortJobRunning(now = Date.now()): boolean {
    for (const r of this.running) if (r !== this.spares && now - r.begun <= PREEMPT_AFTER_MS && !this.isHeavy(r.ns, now)) return true;
    return false;
  }

  /** More than one namespace has been active lately: one's takes may leave another a cold start. */
  shared(now = Date.now()): boolean {
    let n = 0;
    for (const s of this.spaces.values()) if (this.active(s, now) && ++n > 1) return true;
    return false;
  }

  stats(): { activeNamespaces: number; heavyNamespaces: number; demoted: number; pauses: number } {
    const now = Date.now();
    let active = 0;
    let heavy = 0;
    for (const [ns, s] of this.spaces) {
      if (this.active(s, now)) active++;
      if (this.isHeavy(ns, now)) heavy++;
    }
    return { activeNamespaces: active, heavyNamespaces: heavy, demoted: this.demoted, pauses: this.pauses };
  }

  /**
   * A light job (of a namespace that is not heavy) starts: every job of another namespace that
   * is heavy, or has run longer than PREEMPT_AFTER_MS while more jobs and starting engines want
   * to run than there are CPUs, is stopped (SIGSTOP) until the light job
   * ends, for PAUSE_MAX_MS at most. Short jobs then run as if alone; a long job loses the few
   * tens of milliseconds a hello world takes, not its place, and pauseBudgetMs in all at most
   * (then it is left to run, at whatever priority it has). Returns the release.
   */
  private pauseOthers(light: Running, now: number): () => void {
    // Pausing a job that is merely long only helps when the CPUs are oversubscribed: with a core
    // to spare, it would only leave that core idle. A heavy namespace's jobs are paused regardless.
    let wanting = 1 + this.spares.procs.size;
    for (const r of this.running) if (r !== this.spares && r.holds.size === 0 && r.procs.size > 0) wanting++;
    const crowded = wanting > this.opts.cores;
    const pausable = (r: Running) =>
      r === this.spares
        ? crowded
        : r.ns !== light.ns && this.stoppedMs(r, now) < this.opts.pauseBudgetMs && (this.isHeavy(r.ns, now) || (crowded && now - r.begun > PREEMPT_AFTER_MS));
    const token = {};
    const held: Running[] = [];
    for (const r of this.running) {
      if (!pausable(r)) continue;
      held.push(r);
      this.hold(r, token, now);
    }
    if (held.length === 0) return () => {};
    if (held.some((r) => r.procs.size > 0)) this.pauses++;
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      clearTimeout(timer);
      for (const r of held) if (r.holds.delete(token) && r.holds.size === 0) this.resume(r);
    };
    const timer = setTimeout(release, PAUSE_MAX_MS);
    timer.unref();
    return release;
  }

  /** Time `r` has been stopped, the current stop included. */
  private stoppedMs(r: Running, now: number): number {
    return r.pausedMs + (r.holds.size > 0 ? now - r.pausedAt : 0);
  }

  /**
   * `token` holds `r` stopped. Its budget is charged while it is stopped, not when the last
   * holder lets go: light jobs that overlap would otherwise keep it stopped for as long as
   * they keep coming. Engines started for later (spares) belong to no job and have no budget.
   */
  private hold(r: Running, token: object, now: number): void {
    r.holds.add(token);
    if (r.holds.size > 1) return;
    r.pausedAt = now;
    signalAll(r, "SIGSTOP");
    if (r === this.spares) return;
    r.budget = setTimeout(() => this.resume(r), Math.max(0, this.opts.pauseBudgetMs - r.pausedMs));
    r.budget.unref();
  }

  /** `r` (stopped) runs again: charged for the stop, every hold on it dropped. */
  private resume(r: Running): void {
    clearTimeout(r.budget);
    r.budget = undefined;
    r.holds.clear();
    r.pausedMs += Date.now() - r.pausedAt;
    signalAll(r, "SIGCONT");
  }

  /**
   * `child` is an engine starting for no job yet (a pool's refill): paused while a light job
   * runs. Call the returned function once it is ready, before any job may take it.
   */
  spare(child: ChildProcess): () => void {
    const r = this.spares;
    if (!isRunning(child)) return () => {};
    r.procs.add(child);
    if (r.holds.size > 0) signalSandbox(child, "SIGSTOP");
    return () => {
      if (r.procs.delete(child) && r.holds.size > 0) signalSandbox(child, "SIGCONT");
    };
  }

  /** Lets every process this server stopped go on (at exit: nothing stays stopped behind it). */
  continueAll(): void {
    for (const r of this.running) if (r.holds.size > 0) this.resume(r);
  }

  /** A job of `namespace` starts (requests without one share ""). */
  begin(namespace: string | undefined): Job {
    const ns = namespace ?? "";
    const now = Date.now();
    let s = this.spaces.get(ns);
    if (!s) {
      s = { inflight: 0, since: now, lastEnd: -Infinity, begins: [], duty: 0, dutyAt: now };
      this.spaces.set(ns, s);
    }
    if (s.inflight === 0 && now - s.lastEnd > this.opts.gapMs) s.since = now;
    this.dutyNow(s, now);
    s.inflight++;
    s.begins.push(now);
    if (s.begins.length > this.opts.burst) s.begins.shift();
    const space = s;
    let ended = false;
    const me: Running = { ns, begun: now, procs: new Set(), holds: new Set(), pausedMs: 0, pausedAt: 0 };
    const release = this.isHeavy(ns, now) ? () => {} : this.pauseOthers(me, now);
    this.running.add(me);
    const track = (child: ChildProcess) => {
      if (me.procs.has(child) || !isRunning(child)) return;
      me.procs.add(child);
      child.once("exit", () => me.procs.delete(child));
      if (me.holds.size > 0) signalSandbox(child, "SIGSTOP");
    };
    // settle() and watch() both see each pass's process: it is reniced once
    const done = new WeakSet<ChildProcess>();
    const demote = (child: ChildProcess) => {
      if (done.has(child) || !isRunning(child)) return;
      done.add(child);
      this.demoted++;
      void reniceTree(child.pid);
    };
    return {
      heavy: () => this.isHeavy(ns),
      settle: (child) => {
        track(child);
        if (this.isHeavy(ns)) demote(child);
      },
      watch: (child) => {
        track(child);
        let timer: NodeJS.Timeout | undefined;
        const check = () => {
          if (this.isHeavy(ns)) demote(child);
          else {
            timer = setTimeout(check, RECHECK_MS);
            timer.unref();
          }
        };
        check();
        return () => clearTimeout(timer);
      },
      end: () => {
        if (ended) return;
        ended = true;
        this.running.delete(me);
        release();
        if (me.holds.size > 0) this.resume(me);
        const now = Date.now();
        this.dutyNow(space, now);
        space.inflight--;
        space.lastEnd = now;
        if (!this.spaces.has(ns)) this.spaces.set(ns, space);
      },
    };
  }
}

/** Started and not yet exited. */
function isRunning(child: ChildProcess): child is ChildProcess & { pid: number } {
  return child.pid !== undefined && child.exitCode === null && child.signalCode === null;
}

/** `sig` to every process of a running job (see signalSandbox). */
function signalAll(r: Running, sig: NodeJS.Signals): void {
  for (const c of r.procs) signalSandbox(c, sig);
}

/**
 * Sends `sig` to the process groups of `child`'s sandbox: its own (the outer bwrap, or the
 * process itself without a sandbox) and the session bwrap starts below it, where the engine runs.
 */
export function signalSandbox(child: ChildProcess, sig: NodeJS.Signals): void {
  if (!isRunning(child)) return;
  const pid = child.pid;
  let kids = "";
  try {
    kids = readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8");
  } catch {}
  for (const g of [pid, ...kids.split(" ").filter((k) => k.trim()).map(Number)]) {
    try {
      process.kill(-g, sig);
    } catch {}
  }
}

/** Sets `nice` on one process; false if it has gone or is not this server's to change. */
export function renice(pid: number | undefined, nice: number): boolean {
  if (pid === undefined) return false;
  try {
    os.setPriority(pid, nice);
    return true;
  } catch {
    return false;
  }
}

/**
 * Sets `nice` on `root` and every process below it (children are read from /proc after
 * their parent is demoted, so one forked meanwhile inherits the new value). Processes
 * that have gone, or that this server may not touch, are skipped.
 */
export async function reniceTree(root: number, nice = LOW_PRIORITY): Promise<number> {
  const queue = [root];
  const seen = new Set<number>();
  while (queue.length > 0 && seen.size < MAX_TREE) {
    const pid = queue.shift()!;
    if (seen.has(pid)) continue;
    seen.add(pid);
    if (!renice(pid, nice)) continue;
    const tasks = await fs.readdir(`/proc/${pid}/task`).catch(() => [] as string[]);
    for (const t of tasks) {
      const kids = await fs.readFile(`/proc/${pid}/task/${t}/children`, "utf8").catch(() => "");
      for (const k of kids.split(" ")) if (k.trim()) queue.push(Number(k));
    }
  }
  return seen.size;
}
