// `npm test` itself (scripts/test.ts) on fake suites: one passes, one fails in global setup after
// another setup started a server, one hangs without output after starting a detached process,
// one has a failing assertion, one fails after its tests with an unhandled error, and a pair that
// passes only when run side by side.
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { exists } from "../../scripts/process-groups.ts";

const ROOT = resolve(import.meta.dirname, "../..");
const FIX = "test/runner/fixtures";
// The watchdog of the suites here: a test's silence may last 4 s, a start-up 30 s (a vitest start-up
// took over 5 s at a load of 25), so only the hanging fixture trips it. A pair that waits for each
// other's start-up gets 30 s for both.
const WATCHDOG_SECONDS = 4;
const STARTUP_SECONDS = 30;
const work = mkdtempSync(join(tmpdir(), "runner-test-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** Runs `npm test`'s script on the given suites; its output, exit code and duration. */
function runTests(suites: string, env: NodeJS.ProcessEnv = {}): Promise<{ out: string; code: number | null; ms: number }> {
  const started = Date.now();
  const outDir = mkdtempSync(join(work, "out-"));
  const child = spawn(process.execPath, ["scripts/test.ts"], {
    cwd: ROOT,
    env: { ...process.env, TEST_SUITES: suites, TEST_WATCHDOG_SECONDS: String(WATCHDOG_SECONDS), TEST_WATCHDOG_STARTUP_SECONDS: String(STARTUP_SECONDS), TEST_OUT_DIR: outDir, FORCE_COLOR: "0", NO_COLOR: "1", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout.on("data", (d) => (out += d));
  child.stderr.on("data", (d) => (out += d));
  return new Promise((res) => child.on("close", (code) => res({ out, code, ms: Date.now() - started })));
}

const lines = (out: string) => out.trimEnd().split("\n");

describe.concurrent("npm test's runner", () => {
  it("reports a passing, a broken-setup and a hanging suite correctly, in bounded time, and kills the hung tree", async () => {
    const pidFile = join(work, "grandchild.pid");
    const r = await runTests(`pass:${FIX}/pass.config.ts,setup:${FIX}/broken-setup.config.ts,hang:${FIX}/hang.config.ts`, { FIXTURE_PID_FILE: pidFile });
    const all = lines(r.out);

    expect(r.code).toBe(1);
    // the closing line: 1 passed in `pass` + 1 in `hang` before it hung; each failed suite adds one
    expect(all.at(-1)).toBe("2 passed, 2 failed, 1 skipped");
    expect(all.slice(-4, -1)).toEqual([
      "[test] 2 suite(s) counted as failed:",
      expect.stringMatching(/^\[test\] {3}setup: did not start \(exit 1: global setup or start-up failed; its error is above\)$/),
      `[test]   hang: killed after ${WATCHDOG_SECONDS} s without output or a finished test; last test file started: ${FIX}/hang.fixture.ts`,
    ]);
    expect(r.out).toMatch(/\[test\] pass: 1 passed, 0 failed, 1 skipped \(\d+ s\)\n/);

    // the setup's error is on screen, and the suite ended at once: the server the first setup
    // started was closed, so nothing kept vitest alive
    expect(r.out).toContain("FIXTURE-SETUP-BROKEN: the reference file is missing");
    const setupSeconds = Number(/\[test\] setup: .*\((\d+) s\)/.exec(r.out)?.[1]);
    expect(setupSeconds).toBeLessThan(20);

    // the watchdog: reported with the file it was in, and the whole tree is gone, including the
    // process the hung test started in a process group of its own
    expect(r.out).toMatch(/\[test\] hang: 1 passed, 0 failed, then killed \(\d+ s\)/);
    const grandchild = Number(readFileSync(pidFile, "utf8"));
    expect(exists(grandchild)).toBe(false);

    expect(r.ms).toBeLessThan(120_000); // does not hang: three vitest start-ups, one watchdog period
  });

  it("exits 0 with the totals when every suite passes", async () => {
    const r = await runTests(`one:${FIX}/pass.config.ts,two:${FIX}/pass.config.ts`);
    expect(r.code).toBe(0);
    expect(lines(r.out).at(-1)).toBe("2 passed, 0 failed, 2 skipped");
    expect(r.out).not.toContain("counted as failed");
  });

  it("counts a failing assertion, and a suite that fails outside its tests, as failures", async () => {
    const r = await runTests(`fail:${FIX}/fail.config.ts,outside:${FIX}/outside.config.ts`);
    expect(r.code).toBe(1);
    // `fail`: its failed test counts (the suite itself is no extra problem); `outside`: its tests
    // passed, the error after them counts as one more failure
    expect(r.out).toMatch(/\[test\] fail: 1 passed, 1 failed, 0 skipped \(\d+ s\)\n/);
    expect(r.out).toContain("expected 'FIXTURE-ASSERTION' to be 'something else'");
    expect(r.out).toContain("Error: FIXTURE-OUTSIDE-ERROR");
    expect(lines(r.out).slice(-3)).toEqual([
      "[test] 1 suite(s) counted as failed:",
      "[test]   outside: failed outside its tests (exit 1: an error in setup, teardown or an unhandled error; see above)",
      "2 passed, 2 failed, 0 skipped",
    ]);
  });

  it("runs suites joined with + side by side, the second's output shown after the first's, all counted", async () => {
    const dir = mkdtempSync(join(work, "meet-"));
    const r = await runTests(`a:${FIX}/meet-a.config.ts+b:${FIX}/meet-b.config.ts,one:${FIX}/pass.config.ts`, { FIXTURE_MEET_DIR: dir, TEST_WATCHDOG_SECONDS: String(STARTUP_SECONDS) });
    // each of a and b passes only if the other runs at the same time
    expect(r.code, r.out).toBe(0);
    expect(r.out).toMatch(/\[test\] a: 1 passed, 0 failed, 0 skipped \(\d+ s\)\n/);
    const aside = r.out.indexOf("[test] b ran beside the suite above; its output");
    expect(aside).toBeGreaterThan(r.out.indexOf("[test] a: 1 passed"));
    expect(r.out.slice(aside)).toMatch(/\[test\] b: 1 passed, 0 failed, 0 skipped \(\d+ s\)\n/);
    expect(lines(r.out).at(-1)).toBe("3 passed, 0 failed, 1 skipped");
  });

  it("gives a start-up its own, longer watchdog: a 6 s silent global setup passes under it, and is killed under the tests' 4 s", async () => {
    const [patient, strict] = await Promise.all([
      runTests(`slow:${FIX}/slow-start.config.ts`),
      runTests(`slow:${FIX}/slow-start.config.ts`, { TEST_WATCHDOG_STARTUP_SECONDS: String(WATCHDOG_SECONDS) }),
    ]);
    expect(patient.code, patient.out).toBe(0);
    expect(lines(patient.out).at(-1)).toBe("1 passed, 0 failed, 1 skipped");
    expect(strict.code).toBe(1);
    expect(strict.out).toContain(`[test]   slow: killed after ${WATCHDOG_SECONDS} s without output or a finished test; no test file started (stuck in global setup or start-up)`);
  });

  it("counts a suite whose config cannot even load as failed", async () => {
    const r = await runTests(`missing:${FIX}/no-such.config.ts,one:${FIX}/pass.config.ts`);
    expect(r.code).toBe(1);
    expect(lines(r.out).slice(-3)).toEqual([
      "[test] 1 suite(s) counted as failed:",
      expect.stringMatching(/^\[test\] {3}missing: did not (start|finish) \(exit 1/),
      "1 passed, 1 failed, 1 skipped",
    ]);
  });
});
