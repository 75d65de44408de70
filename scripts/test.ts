// `npm test`: TeX and Chromium check/install, then every suite in turn (the runner's own tests, Workers
// runtime with dev and with deployed settings, Node unit tests, compile server, end to end with browser), each run even if an earlier one failed,
// and one closing line with the totals: `N passed, N failed, N skipped`, where a suite that did not start,
// did not finish or failed outside its tests counts as one more failure and is listed just above that line.
// Suites grouped side by side: the first of a group prints as it goes, the others into .tmp/vitest-NAME.log,
// shown when the group ends.
//
// A watchdog ends a suite that prints nothing and finishes no test for TEST_WATCHDOG_SECONDS (default
// 300; TEST_WATCHDOG_STARTUP_SECONDS, default the same, until its first test file starts): its whole
// process tree is killed and it is reported with the test files it was running.
// TEST_SUITES=name:config,... runs other suites (no TeX or Chromium check), `a:config+b:config` side by
// side; TEST_OUT_DIR (default .tmp) holds each suite's results; extra arguments go to every vitest.
import { spawn, spawnSync } from "node:child_process";
import { createReadStream, createWriteStream, mkdirSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { finished, pipeline } from "node:stream/promises";
import { resolve } from "node:path";
import { exists, signal } from "./process-groups.ts";
import type { Progress } from "./test-progress.ts";

interface Suite {
  name: string;
  config: string;
}

/**
 * Groups run one after the other; the suites of a group side by side. Each suite alone: on 2 cores the
 * Workers suite beside end to end took longer than the two one after the other, and a Workers delivery
 * test failed under the load.
 */
const SUITES: Suite[][] = [
  [{ name: "runner", config: "test/runner/vitest.config.ts" }],
  [{ name: "workers", config: "vitest.workers.config.ts" }],
  [{ name: "workers-deployed", config: "vitest.workers-deployed.config.ts" }],
  [{ name: "unit-node", config: "test/unit/vitest.node.config.ts" }],
  [{ name: "compile-server", config: "container/vitest.config.ts" }],
  // end to end and browser against one `npm run dev`
  [{ name: "e2e", config: "test/e2e/vitest.config.ts" }],
];

const custom = process.env.TEST_SUITES;
const groups: Suite[][] = custom
  ? custom.split(",").map((g) =>
      g.split("+").map((s) => {
        const [name, config] = s.split(":");
        if (!name || !config) throw new Error(`TEST_SUITES: expected name:config, got ${s}`);
        return { name, config };
      }),
    )
  : SUITES;
function seconds(name: string, fallback: string): number {
  const raw = process.env[name] ?? fallback;
  const n = Number(raw);
  if (!(n > 0)) {
    console.error(`${name}=${raw}: expected a number of seconds > 0`);
    process.exit(2);
  }
  return n;
}
const watchdogSeconds = seconds("TEST_WATCHDOG_SECONDS", "300");
// a start-up (vitest, global setup) may be slower than a test is allowed to be silent
const startupSeconds = seconds("TEST_WATCHDOG_STARTUP_SECONDS", String(watchdogSeconds));

if (!custom) {
  // TeX Live and Chromium (the browser suite), installed when missing like a fresh CI machine needs,
  // and the Worker's static assets, built once here: suites that run side by side would build them at once
  for (const setup of ["scripts/ensure-tex.ts", "scripts/ensure-browser.ts", "scripts/docs-assets.ts", "scripts/dashboard-build.ts"]) {
    const r = spawnSync(process.execPath, [setup], { stdio: "inherit" });
    if (r.status !== 0) process.exit(r.status ?? 1);
  }
}

const vitest = new URL("../node_modules/vitest/vitest.mjs", import.meta.url).pathname;
const progressReporter = new URL("./test-progress.ts", import.meta.url).pathname;
const outDir = resolve(process.env.TEST_OUT_DIR || ".tmp"); // results and progress files of each suite
mkdirSync(outDir, { recursive: true });

interface Outcome {
  passed: number;
  failed: number;
  skipped: number;
  /** Why the suite counts as one more failure; undefined when it ran to the end. */
  problem?: string;
}

/** Every process below `root` (by parent pid), with its process group and start time. */
function descendants(root: number): Array<{ pid: number; pgid: number; start: string }> {
  const procs: Array<{ pid: number; ppid: number; pgid: number; start: string }> = [];
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return []; // no procfs: the process group is all we can reach
  }
  for (const e of entries) {
    if (!/^\d+$/.test(e)) continue;
    try {
      const stat = readFileSync(`/proc/${e}/stat`, "utf8");
      const f = stat.slice(stat.lastIndexOf(")") + 2).split(" "); // fields from 3 (state) on
      procs.push({ pid: Number(e), ppid: Number(f[1]), pgid: Number(f[2]), start: f[19] ?? "" });
    } catch {
      /* exited meanwhile */
    }
  }
  const out: Array<{ pid: number; pgid: number; start: string }> = [];
  const seen = new Set([root]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const p of procs) {
      if (!seen.has(p.pid) && seen.has(p.ppid)) {
        seen.add(p.pid);
        out.push(p);
        grew = true;
      }
    }
  }
  return out;
}

function startTime(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19] ?? null;
  } catch {
    return null;
  }
}

/**
 * Ends a suite and everything it started: its process group, and the groups of descendants that made
 * their own (a detached `npm run dev`, TeX engines). SIGTERM first so they can clean up, SIGKILL
 * after `graceMs` for whatever is still there (and is still the same process: pids are re-used).
 */
async function killTree(pid: number, graceMs = 3000): Promise<void> {
  const tree = descendants(pid);
  const groups = new Set([pid, ...tree.map((p) => p.pgid)].filter((g) => g > 1 && g !== process.pid));
  for (const g of groups) signal(-g, "SIGTERM");
  const alive = () => [...groups].some((g) => exists(-g)) || tree.some((p) => startTime(p.pid) === p.start);
  for (const end = Date.now() + graceMs; Date.now() < end && alive(); ) await new Promise((r) => setTimeout(r, 100));
  for (const g of groups) signal(-g, "SIGKILL");
  for (const p of tree) if (startTime(p.pid) === p.start) signal(p.pid, "SIGKILL");
}

/** The suites running now, by pid. */
const current = new Set<number>();
for (const sig of ["SIGINT", "SIGTERM"] as const) {
  process.on(sig, () => {
    // suites run in their own process groups: a Ctrl-C reaches only this process
    console.log(`\n[test] ${sig}: stopping`);
    void Promise.all([...current].map((pid) => killTree(pid, 1000))).then(() => process.exit(130));
  });
}

/** Where a suite's output goes: the terminal, or its log file while another suite has the terminal. */
interface Sink {
  write(chunk: Buffer | string, stderr: boolean): void;
}
const terminal: Sink = { write: (d, stderr) => (stderr ? process.stderr : process.stdout).write(d) };

function readJson<T>(file: string): T | null {
  try {
    return JSON.parse(readFileSync(file, "utf8")) as T;
  } catch {
    return null;
  }
}

async function runSuite(suite: Suite, sink: Sink): Promise<Outcome> {
  const say = (line: string) => sink.write(`${line}\n`, false);
  // Absolute: vitest resolves outputFile against each config's own root.
  const out = resolve(outDir, `vitest-${suite.name}.json`);
  const progressFile = resolve(outDir, `vitest-${suite.name}.progress.json`);
  rmSync(out, { force: true });
  rmSync(progressFile, { force: true });
  const args = [vitest, "run", "--config", suite.config, "--reporter=default", "--reporter=json", `--outputFile.json=${out}`, `--reporter=${progressReporter}`, ...process.argv.slice(2)];
  const env: NodeJS.ProcessEnv = { ...process.env, TEST_PROGRESS_FILE: progressFile };
  if (process.stdout.isTTY && env.FORCE_COLOR === undefined) env.FORCE_COLOR = "1";
  const started = Date.now();
  // Own process group, so the watchdog can end the suite with everything it started.
  const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "pipe"], detached: true, env });
  const pid = child.pid;
  if (pid !== undefined) current.add(pid);
  let lastOutput = Date.now();
  let killed: string | undefined;
  let killing: Promise<void> | undefined;
  child.stdout!.on("data", (d: Buffer) => {
    lastOutput = Date.now();
    sink.write(d, false);
  });
  child.stderr!.on("data", (d: Buffer) => {
    lastOutput = Date.now();
    sink.write(d, true);
  });
  let fileStarted = false;
  const watchdog = setInterval(() => {
    if (killed) return;
    // a finished test counts as a sign of life, though the default reporter prints only per file
    const progressed = statSync(progressFile, { throwIfNoEntry: false })?.mtimeMs ?? 0;
    // start-up lasts until the first test file starts
    if (!fileStarted && progressed) fileStarted = readJson<Progress>(progressFile)?.lastStarted != null;
    const limit = (fileStarted ? watchdogSeconds : startupSeconds) * 1000;
    if (Date.now() - Math.max(lastOutput, progressed) < limit) return;
    const p = readJson<Progress>(progressFile);
    const others = p?.running.filter((f) => f !== p.lastStarted) ?? [];
    const where = p?.lastStarted
      ? `last test file started: ${p.lastStarted}${others.length ? ` (also still running: ${others.join(", ")})` : ""}`
      : "no test file started (stuck in global setup or start-up)";
    killed = `killed after ${limit / 1000} s without output or a finished test; ${where}`;
    say(`\n[test] ${suite.name}: ${killed}`);
    killing = pid === undefined ? undefined : killTree(pid);
  }, 250);
  const exit = await new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((res) => {
    child.on("error", () => res({ code: null, signal: null }));
    child.on("close", (code, sig) => res({ code, signal: sig }));
  });
  clearInterval(watchdog);
  if (pid !== undefined) current.delete(pid);
  // anything left in its process group (a setup that never closed its server) goes with it
  await (killing ?? (pid === undefined ? undefined : killTree(pid, 0)));
  const seconds = Math.round((Date.now() - started) / 1000);
  const status = exit.signal ?? `exit ${exit.code}`;

  const r = killed ? null : readJson<{ numTotalTests: number; numPassedTests: number; numFailedTests: number; numPendingTests: number; numTodoTests: number }>(out);
  if (!r) {
    const p = readJson<Progress>(progressFile);
    const partial = { passed: p?.passed ?? 0, failed: p?.failed ?? 0, skipped: p?.skipped ?? 0 };
    const problem = killed ?? `did not finish (${status}, no results; its error is above)`;
    say(`[test] ${suite.name}: ${partial.passed} passed, ${partial.failed} failed, then ${killed ? "killed" : "ended"} (${seconds} s)`);
    return { ...partial, problem };
  }
  const o: Outcome = { passed: r.numPassedTests, failed: r.numFailedTests, skipped: r.numPendingTests + r.numTodoTests };
  if (exit.code !== 0 && r.numTotalTests === 0) o.problem = `did not start (${status}: global setup or start-up failed; its error is above)`;
  else if (exit.code !== 0 && o.failed === 0) o.problem = `failed outside its tests (${status}: an error in setup, teardown or an unhandled error; see above)`;
  say(`[test] ${suite.name}: ${o.passed} passed, ${o.failed} failed, ${o.skipped} skipped (${seconds} s)${o.problem ? `; ${o.problem}` : ""}`);
  return o;
}

/** Runs `suite` with its output in `outDir/vitest-NAME.log`, then shows that file. */
async function runAside(suite: Suite): Promise<{ outcome: Outcome; show: () => Promise<void> }> {
  const file = resolve(outDir, `vitest-${suite.name}.log`);
  const log = createWriteStream(file);
  const outcome = await runSuite(suite, { write: (d) => log.write(d) });
  log.end();
  await finished(log);
  return {
    outcome,
    show: async () => {
      console.log(`[test] ${suite.name} ran beside the suite above; its output (${file}):`);
      await pipeline(createReadStream(file), process.stdout, { end: false });
    },
  };
}

const total = { passed: 0, failed: 0, skipped: 0 };
const problems: string[] = [];
for (const [first, ...aside] of groups) {
  const besides = aside.map(runAside);
  const outcomes: Array<[Suite, Outcome]> = [[first!, await runSuite(first!, terminal)]];
  for (const [i, b] of besides.entries()) {
    const { outcome, show } = await b;
    await show();
    outcomes.push([aside[i]!, outcome]);
  }
  for (const [suite, o] of outcomes) {
    total.passed += o.passed;
    total.failed += o.failed + (o.problem ? 1 : 0);
    total.skipped += o.skipped;
    if (o.problem) problems.push(`${suite.name}: ${o.problem}`);
  }
}
if (problems.length) {
  console.log(`[test] ${problems.length} suite(s) counted as failed:`);
  for (const p of problems) console.log(`[test]   ${p}`);
}
console.log(`${total.passed} passed, ${total.failed} failed, ${total.skipped} skipped`);
process.exit(total.failed === 0 ? 0 : 1);
