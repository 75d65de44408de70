// `npm test`: TeX check/install, then every suite in turn (Workers runtime, compile server, end to end),
// each run even if an earlier one failed, and one closing line with the totals.
import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, rmSync } from "node:fs";
import { resolve } from "node:path";

const SUITES = [
  { name: "workers", config: "vitest.workers.config.ts" },
  { name: "compile-server", config: "container/vitest.config.ts" },
  { name: "e2e", config: "test/e2e/vitest.config.ts" },
];

const tex = spawnSync(process.execPath, ["scripts/ensure-tex.ts"], { stdio: "inherit" });
if (tex.status !== 0) process.exit(tex.status ?? 1);

const vitest = new URL("../node_modules/vitest/vitest.mjs", import.meta.url).pathname;
mkdirSync(".tmp", { recursive: true });
let passed = 0;
let failed = 0;
let skipped = 0;
let ok = true;
const extra = process.argv.slice(2);
for (const suite of SUITES) {
  // Absolute: vitest resolves outputFile against each config's own root.
  const out = resolve(`.tmp/vitest-${suite.name}.json`);
  rmSync(out, { force: true });
  const run = spawnSync(process.execPath, [vitest, "run", "--config", suite.config, "--reporter=default", "--reporter=json", `--outputFile.json=${out}`, ...extra], { stdio: "inherit" });
  if (run.status !== 0) ok = false;
  try {
    const r = JSON.parse(readFileSync(out, "utf8")) as { numPassedTests: number; numFailedTests: number; numPendingTests: number; numTodoTests: number };
    passed += r.numPassedTests;
    failed += r.numFailedTests;
    skipped += r.numPendingTests + r.numTodoTests;
    console.log(`[test] ${suite.name}: ${r.numPassedTests} passed, ${r.numFailedTests} failed`);
  } catch {
    console.log(`[test] ${suite.name}: no results (the suite did not start)`);
    ok = false;
  }
}
console.log(`${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exit(ok && failed === 0 ? 0 : 1);
