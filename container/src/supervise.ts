// Supervision of the processes the server starts for jobs: waiting for their end, killing their
// whole process group at a deadline, on shutdown or when their job folder is over a cap, and
// reading their exit status as the engine's own. One home for it, so the job runner, the pools,
// the preamble dumps and the start-up check do not each re-implement it.
import type { ChildProcess } from "node:child_process";
import { constants as osConstants } from "node:os";
import type { JobPriority } from "./fairness.ts";
import type { JobCaps, Overrun, WorkDir } from "./workdir.ts";

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** Kills the whole process group of a detached child; ignores already-dead groups. */
export function killGroup(child: ChildProcess, signal: NodeJS.Signals = "SIGKILL"): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    /* already gone */
  }
}

/**
 * Exit status of a spawned process as if it were the engine's own: bwrap reports a
 * command killed by signal N as exit code 128 + N, so map that back to the signal.
 */
export function normaliseExit(code: number | null, signal: NodeJS.Signals | null): Exit {
  if (signal === null && code !== null && code > 128 && code < 128 + 65) {
    const name = (Object.keys(osConstants.signals) as NodeJS.Signals[]).find((k) => osConstants.signals[k] === code - 128);
    if (name) return { code: null, signal: name };
  }
  return { code, signal };
}

/** The child's exit (normalised; `null`s when it could not start), also when it has already exited. */
export function exitOf(child: ChildProcess): Promise<Exit> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve(normaliseExit(child.exitCode, child.signalCode as NodeJS.Signals | null));
    child.on("exit", (code, signal) => resolve(normaliseExit(code, signal)));
    child.on("error", () => resolve({ code: null, signal: null }));
  });
}

/**
 * Waits until the child has exited and its output is closed, killing its process group after
 * `timeoutMs` or when `signal` aborts, and once more at the end (stray children of a finished
 * process). Resolves with its exit code (null: killed, or it could not start; `error` then set).
 */
export async function closeOf(child: ChildProcess, timeoutMs: number, signal?: AbortSignal): Promise<{ code: number | null; error?: Error }> {
  const kill = () => killGroup(child);
  const timer = setTimeout(kill, timeoutMs);
  signal?.addEventListener("abort", kill);
  if (signal?.aborted) kill();
  try {
    return await new Promise((resolve) => {
      child.on("close", (code) => resolve({ code }));
      child.on("error", (error) => resolve({ code: null, error }));
    });
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener("abort", kill);
    killGroup(child);
  }
}

/** Why a job's process ended. */
export type Ending = "exit" | "timeout" | "aborted" | Overrun;

export interface RunOutcome extends Exit {
  ending: Ending;
}

/** What bounds a job's process: its deadline, the server's shutdown or the caller leaving, its CPU priority. */
export interface Bounds {
  deadline: number;
  signal?: AbortSignal | undefined;
  prio: JobPriority;
}

/** How often a running process's folder is looked at; sizes are summed every SIZE_EVERY-th look. */
const WATCH_MS = 200;
const SIZE_EVERY = 5;

/**
 * Waits for a job's process group to end; kills it at the deadline, when `signal` aborts, or
 * when the job folder is over a cap (WorkDir.check, on a 200 ms cadence and once after the exit).
 */
export async function runToExit(child: ChildProcess, exited: Promise<Exit>, work: WorkDir, caps: JobCaps, { deadline, signal, prio }: Bounds): Promise<RunOutcome> {
  let ending: Ending = "exit";
  const unwatch = prio.watch(child);
  const stop = (why: Ending) => {
    if (ending === "exit") ending = why;
    killGroup(child);
  };
  const timer = setTimeout(() => stop("timeout"), Math.max(0, deadline - Date.now()));
  const onAbort = () => stop("aborted");
  if (signal?.aborted) onAbort();
  signal?.addEventListener("abort", onAbort);
  let watching = true;
  let wake: (() => void) | undefined;
  const watch = (async () => {
    for (let tick = 1; watching; tick++) {
      await new Promise<void>((r) => {
        wake = r;
        setTimeout(r, WATCH_MS);
      });
      if (!watching) break;
      const over = await work.check(caps, tick % SIZE_EVERY === 0);
      if (over && watching) {
        stop(over);
        break;
      }
    }
  })();
  const { code, signal: sig } = await exited;
  unwatch();
  watching = false;
  wake?.();
  clearTimeout(timer);
  signal?.removeEventListener("abort", onAbort);
  killGroup(child); // stray children (xdvipdfmx) of a finished engine
  await watch;
  if (ending === "exit" && sig === "SIGXFSZ") ending = "too_large";
  // a process quicker than the watch's cadence is held to the same caps by one last look
  if (ending === "exit") ending = (await work.check(caps, true)) ?? "exit";
  if (ending === "exit" && (sig === "SIGXCPU" || (sig === "SIGKILL" && code === null))) ending = "timeout";
  return { ending, code, signal: sig };
}
