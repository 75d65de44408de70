// Runtime limits: the admission gate (concurrency + bounded queue), the job
// directory watch (files, bytes, log) and the event-loop lag monitor. Static
// limits (sizes, times) live in config.ts.
import { monitorEventLoopDelay, type ELDHistogram } from "node:perf_hooks";
import { WorkDir, type JobCaps, type Overrun } from "./workdir.ts";

export class Busy extends Error {
  readonly retryAfterSeconds: number;
  constructor(retryAfterSeconds: number, message = "The compile server is at capacity.") {
    super(message);
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/** The job was cancelled while it waited for a slot. */
export class JobCancelled extends Error {
  constructor() {
    super("The job was cancelled.");
  }
}

interface Waiter {
  ns: string;
  resolve: (extra: boolean) => void;
  reject: (e: Error) => void;
  timer: NodeJS.Timeout;
}

/**
 * At most `max` holders; up to `maxQueue` waiters (each at most `waitMs`), of which at most
 * `maxQueuePerNs` of one namespace (account); beyond that Busy, so one account cannot fill
 * the queue and turn every other account away.
 * Fair between namespaces: a freed slot goes to the waiter whose namespace holds the fewest
 * slots (among equals, the one served longest ago: round robin between the accounts that
 * wait; then the longest waiting), and a namespace holding none may take one slot over `max`
 * while every slot is held by others, so one account's long jobs never make another's wait
 * (its extra job competes with processes that fairness.ts has demoted).
 */
export class Gate {
  private active = 0;
  private extra = false;
  private readonly holders = new Map<string, number>();
  /** When each namespace was last given a slot (a grant counter). */
  private readonly served = new Map<string, number>();
  private grants = 0;
  private readonly waiters: Waiter[] = [];
  /** Waiters per namespace. */
  private readonly waiting = new Map<string, number>();
  private readonly max: number;
  private readonly maxQueue: number;
  private readonly maxQueuePerNs: number;
  private readonly waitMs: number;
  private avgJobMs = 1000;
  private lastReleasedAt = 0;

  constructor(max: number, maxQueue: number, waitMs: number, maxQueuePerNs = maxQueue) {
    this.max = max;
    this.maxQueue = maxQueue;
    this.waitMs = waitMs;
    this.maxQueuePerNs = maxQueuePerNs;
  }

  retryAfter(): number {
    const queued = this.waiters.length + 1;
    return Math.max(1, Math.ceil((queued * this.avgJobMs) / this.max / 1000));
  }

  /** `signal`: a waiter whose job is cancelled leaves the queue at once (rejected with JobCancelled). */
  async acquire(namespace = "", signal?: AbortSignal): Promise<() => void> {
    if (signal?.aborted) throw new JobCancelled();
    const held = this.holders.get(namespace) ?? 0;
    if (this.active < this.max) return this.grant(namespace, false);
    if (!this.extra && held === 0 && this.max > 1) return this.grant(namespace, true);
    if (this.waiters.length >= this.maxQueue) throw new Busy(this.retryAfter());
    if ((this.waiting.get(namespace) ?? 0) >= this.maxQueuePerNs) throw new Busy(this.retryAfter(), "This account has as many compiles waiting as one account may; retry when one has finished.");
    const extra = await new Promise<boolean>((resolve, reject) => {
      const w: Waiter = {
        ns: namespace,
        resolve,
        reject,
        timer: setTimeout(() => {
          const i = this.waiters.indexOf(w);
          if (i >= 0) this.unqueue(i);
          reject(new Busy(this.retryAfter()));
        }, this.waitMs),
      };
      this.waiters.push(w);
      this.waiting.set(namespace, (this.waiting.get(namespace) ?? 0) + 1);
      signal?.addEventListener(
        "abort",
        () => {
          const i = this.waiters.indexOf(w);
          if (i < 0) return; // already granted: the holder releases it
          this.unqueue(i);
          clearTimeout(w.timer);
          reject(new JobCancelled());
        },
        { once: true },
      );
    });
    return this.releaser(namespace, extra);
  }

  /**
   * A slot for background work of `namespace` (a preamble dump) only if one is free and nobody
   * waits: it never takes the extra slot, never queues, and never goes before a request.
   */
  tryAcquire(namespace = ""): (() => void) | undefined {
    if (this.active >= this.max || this.waiters.length > 0) return undefined;
    return this.grant(namespace, false);
  }

  /** Takes waiter `i` out of the queue. */
  private unqueue(i: number): Waiter {
    const [w] = this.waiters.splice(i, 1);
    const left = (this.waiting.get(w!.ns) ?? 1) - 1;
    if (left > 0) this.waiting.set(w!.ns, left);
    else this.waiting.delete(w!.ns);
    return w!;
  }

  private grant(ns: string, extra: boolean): () => void {
    this.take(ns, extra);
    return this.releaser(ns, extra);
  }

  private take(ns: string, extra: boolean): void {
    this.active++;
    if (extra) this.extra = true;
    this.holders.set(ns, (this.holders.get(ns) ?? 0) + 1);
    this.served.delete(ns); // re-inserted last: the map stays in order of service and is trimmed from the front
    this.served.set(ns, ++this.grants);
    if (this.served.size > 10_000) this.served.delete(this.served.keys().next().value!);
  }

  private releaser(ns: string, extra: boolean): () => void {
    const started = Date.now();
    let done = false;
    return () => {
      if (done) return;
      done = true;
      this.lastReleasedAt = Date.now();
      this.avgJobMs = this.avgJobMs * 0.8 + (this.lastReleasedAt - started) * 0.2;
      const left = (this.holders.get(ns) ?? 1) - 1;
      if (left > 0) this.holders.set(ns, left);
      else this.holders.delete(ns);
      this.active--;
      if (extra) this.extra = false;
      this.passOn();
    };
  }

  /** Gives a free slot (or the free extra one, to a namespace holding none) to the fairest waiter. */
  private passOn(): void {
    const regular = this.active < this.max;
    if (!regular && (this.extra || this.max < 2)) return;
    let best = -1;
    for (let i = 0; i < this.waiters.length; i++) {
      const held = this.holders.get(this.waiters[i]!.ns) ?? 0;
      if (!regular && held > 0) continue;
      if (best < 0 || this.fairer(this.waiters[i]!.ns, this.waiters[best]!.ns)) best = i;
    }
    if (best < 0) return;
    const next = this.unqueue(best);
    clearTimeout(next.timer);
    this.take(next.ns, !regular);
    next.resolve(!regular);
  }

  /** `a` before `b`: it holds fewer slots, or as many and was last served longer ago. */
  private fairer(a: string, b: string): boolean {
    const ha = this.holders.get(a) ?? 0;
    const hb = this.holders.get(b) ?? 0;
    if (ha !== hb) return ha < hb;
    return (this.served.get(a) ?? -Infinity) < (this.served.get(b) ?? -Infinity);
  }

  /** A job is running, or one ended within `graceMs` (its response may still be on its way out). */
  busy(graceMs: number, now = Date.now()): boolean {
    return this.active > 0 || now - this.lastReleasedAt < graceMs;
  }

  stats(): { active: number; queued: number; max: number; maxQueue: number; maxQueuePerAccount: number } {
    return { active: this.active, queued: this.waiters.length, max: this.max, maxQueue: this.maxQueue, maxQueuePerAccount: this.maxQueuePerNs };
  }
}

export type { JobCaps, Overrun } from "./workdir.ts";

/** One look at a job directory while its programs run: see WorkDir.check. */
export function checkJobDir(dir: string, caps: JobCaps, sizes: boolean): Promise<Overrun | undefined> {
  return new WorkDir(dir).check(caps, sizes);
}

export interface LoopLag {
  /** 99th percentile of how late the event loop ran a 10 ms timer, over the last 10-20 s. */
  p99Ms: number;
  maxMs: number;
  windowMs: number;
}

/**
 * Event-loop lag as health reports it: a timer that should fire every RESOLUTION_MS
 * records how late it ran; the histogram is rotated every WINDOW_MS and the figures
 * cover the finished window and the running one, so they are recent but never empty.
 */
export class LoopLagMonitor {
  private static readonly RESOLUTION_MS = 10;
  private static readonly WINDOW_MS = 10_000;
  /** Samples a window needs before its p99 counts (one second's worth). */
  private static readonly MIN_SAMPLES = 100;
  private readonly h: ELDHistogram = monitorEventLoopDelay({ resolution: LoopLagMonitor.RESOLUTION_MS });
  private last = { p99: 0, max: 0 };
  private readonly timer: NodeJS.Timeout;

  constructor() {
    this.h.enable();
    this.timer = setInterval(() => {
      this.last = this.read();
      this.h.reset();
    }, LoopLagMonitor.WINDOW_MS);
    this.timer.unref();
  }

  private read(): { p99: number; max: number } {
    // the histogram holds whole timer intervals (ns); lag is what exceeds the interval
    const lag = (ns: number) => (this.h.count === 0 ? 0 : Math.max(0, ns / 1e6 - LoopLagMonitor.RESOLUTION_MS));
    // a window just begun has too few samples for a 99th percentile (of 20, it is the max)
    const p99 = this.h.count >= LoopLagMonitor.MIN_SAMPLES ? lag(this.h.percentile(99)) : 0;
    return { p99, max: lag(this.h.max) };
  }

  stats(): LoopLag {
    const now = this.read();
    const round = (n: number) => Math.round(n * 10) / 10;
    return { p99Ms: round(Math.max(now.p99, this.last.p99)), maxMs: round(Math.max(now.max, this.last.max)), windowMs: 2 * LoopLagMonitor.WINDOW_MS };
  }

  stop(): void {
    clearInterval(this.timer);
    this.h.disable();
  }
}
