// Runtime limits: the admission gate (concurrency + bounded queue) and the job
// directory size watch. Static limits (sizes, times) live in config.ts.
import { promises as fs } from "node:fs";
import path from "node:path";

export class Busy extends Error {
  readonly retryAfterSeconds: number;
  constructor(retryAfterSeconds: number) {
    super("The compile server is at capacity.");
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/** At most `max` holders; up to `maxQueue` waiters (each at most `waitMs`); beyond that Busy. */
export class Gate {
  private active = 0;
  private readonly waiters: Array<{ resolve: () => void; reject: (e: Error) => void; timer: NodeJS.Timeout }> = [];
  private readonly max: number;
  private readonly maxQueue: number;
  private readonly waitMs: number;
  private avgJobMs = 1000;
  private lastReleasedAt = 0;

  constructor(max: number, maxQueue: number, waitMs: number) {
    this.max = max;
    this.maxQueue = maxQueue;
    this.waitMs = waitMs;
  }

  retryAfter(): number {
    const queued = this.waiters.length + 1;
    return Math.max(1, Math.ceil((queued * this.avgJobMs) / this.max / 1000));
  }

  async acquire(): Promise<() => void> {
    if (this.active < this.max) {
      this.active++;
      return this.releaser();
    }
    if (this.waiters.length >= this.maxQueue) throw new Busy(this.retryAfter());
    await new Promise<void>((resolve, reject) => {
      const w = {
        resolve,
        reject,
        timer: setTimeout(() => {
          const i = this.waiters.indexOf(w);
          if (i >= 0) this.waiters.splice(i, 1);
          reject(new Busy(this.retryAfter()));
        }, this.waitMs),
      };
      this.waiters.push(w);
    });
    return this.releaser();
  }

  private releaser(): () => void {
    const started = Date.now();
    let done = false;
    return () => {
      if (done) return;
      done = true;
      this.lastReleasedAt = Date.now();
      this.avgJobMs = this.avgJobMs * 0.8 + (this.lastReleasedAt - started) * 0.2;
      const next = this.waiters.shift();
      if (next) {
        clearTimeout(next.timer);
        next.resolve(); // the slot passes to the waiter
      } else this.active--;
    };
  }

  /** A job is running, or one ended within `graceMs` (its response may still be on its way out). */
  busy(graceMs: number, now = Date.now()): boolean {
    return this.active > 0 || now - this.lastReleasedAt < graceMs;
  }

  stats(): { active: number; queued: number; max: number; maxQueue: number } {
    return { active: this.active, queued: this.waiters.length, max: this.max, maxQueue: this.maxQueue };
  }
}

/** Total bytes of regular files under dir; stops counting once over `cap`. */
export async function dirSize(dir: string, cap = Infinity): Promise<number> {
  let total = 0;
  const stack = [dir];
  while (stack.length && total <= cap) {
    const d = stack.pop()!;
    let entries;
    try {
      entries = await fs.readdir(d, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const e of entries) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) stack.push(p);
      else if (e.isFile()) {
        const st = await fs.lstat(p).catch(() => undefined);
        if (st) total += st.size;
      }
    }
  }
  return total;
}
