import { enqueueRecorded } from "../../events/emit.ts";
import { log } from "../../platform/log.ts";
import { groupWriteJson } from "../store/group-writes.ts";
import type { Shard } from "../../platform/shards.ts";
import type { WriteBuffer } from "./write-buffer.ts";

/** A group commit runs this long after the first change it carries... */
export const COMMIT_DELAY_MS = 100;
/** ...or at once when this many changes wait. */
const COMMIT_ROWS = 500;
/** Rows (and events) per commit: its JSON parts stay a few statements of one D1 batch. */
const ROWS_PER_COMMIT = 1000;
/** Commits one flush makes at most before yielding (what is left goes with the next). */
const MAX_COMMITS = 50;
/** The DO's alarm is the durable backstop of the timer: a commit lost with the isolate still runs. */
const BACKSTOP_MS = 2_000;
/** After a failed commit, the next try. */
const RETRY_MS = 1_000;
/** Clean rows are pruned at most this often. */
const PRUNE_EVERY_MS = 1_000;
/** Changes waiting past this (D1 failing for a while) and the session refuses new sends until commits go through. */
const MAX_WAITING = 20_000;

export interface CommitHost {
  readonly env: Env;
  readonly buffer: WriteBuffer;
  /** Makes sure the DO's alarm fires by `at` (it flushes). */
  wakeAt(at: number): Promise<void>;
  /** The session's account shard, where its commits go (resolved once by the DO). */
  shard(): Promise<Shard>;
  /** One commit went through (for the DO's log line). */
  committed?(rows: number, events: number): void;
}

/**
 * When a Session DO's buffered writes go to D1: at most COMMIT_DELAY_MS after a change, or at once
 * past COMMIT_ROWS, or when a read of the session asks (`flush`). One commit at a time, in order;
 * each is one D1 batch, then its events go on the queue with their content.
 */
export class GroupCommit {
  private timer: ReturnType<typeof setTimeout> | null = null;
  private waiting = 0;
  private chain: Promise<void> = Promise.resolve();
  /**
   * Whether the buffer may hold something D1 lacks. Unknown at start (a restart leaves what the
   * timer never committed), so the first flush looks; after a drain that left nothing, a flush with
   * nothing recorded since costs no statement at all (every inbound message and read asks for one).
   */
  private maybeWaiting = true;
  private prunedAt = 0;

  constructor(private readonly host: CommitHost) {}

  /** Too much waits for D1 (its commits keep failing): new sends are refused (503) rather than buffered without bound. */
  overloaded(): boolean {
    return this.waiting > MAX_WAITING;
  }

  /**
   * `n` changes were buffered: commit soon. `settle`: they are about to change again (a bulk's queued
   * rows, which the alarm sends at once), so they wait the usual delay even past COMMIT_ROWS and most
   * go to D1 once, already sent, not first as pending.
   */
  recorded(n: number, settle = false): void {
    if (n <= 0) return;
    this.maybeWaiting = true;
    this.waiting += n;
    if (this.waiting >= COMMIT_ROWS && !settle) return this.arm(0);
    this.arm(COMMIT_DELAY_MS);
    void this.host.wakeAt(Date.now() + BACKSTOP_MS).catch((err) => log.error("write buffer backstop alarm failed", { error: String(err) }));
  }

  private arm(delayMs: number): void {
    if (this.timer !== null && delayMs > 0) return;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = null;
      this.flush().catch((err) => {
        log.error("group commit failed; retried", { error: String(err) });
        this.arm(RETRY_MS);
      });
    }, delayMs);
  }

  /** Commits everything buffered so far (after any commit under way). Throws when D1 does. */
  flush(): Promise<void> {
    if (!this.maybeWaiting) return this.chain;
    const run = this.chain.then(() => this.drain());
    this.chain = run.catch(() => {});
    return run;
  }

  private async drain(): Promise<void> {
    const { buffer, env } = this.host;
    for (let i = 0; i < MAX_COMMITS; i++) {
      const batch = buffer.pending(ROWS_PER_COMMIT);
      if (batch.messages.length === 0 && batch.events.length === 0) break;
      const shard = await this.host.shard();
      await groupWriteJson(shard, batch.messages.map((m) => m.json), batch.events);
      buffer.committed(batch);
      this.waiting = Math.max(0, this.waiting - batch.messages.length - batch.events.length);
      // Committed: a lost queue send is found by the cron (the event is in D1, not fanned out).
      if (batch.events.length > 0) await enqueueRecorded(env, shard, batch.events);
      this.host.committed?.(batch.messages.length, batch.events.length);
    }
    const left = buffer.size();
    if (left > 0) this.arm(0);
    else {
      // Nothing recorded since size() looked (no await in between): the next flush can skip.
      this.waiting = 0;
      this.maybeWaiting = false;
    }
    // Pruning counts the clean rows: at most once a second, not on every drain.
    const now = Date.now();
    if (now - this.prunedAt >= PRUNE_EVERY_MS) {
      this.prunedAt = now;
      buffer.prune(now);
    }
  }
}
