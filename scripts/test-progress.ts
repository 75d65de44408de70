// A vitest reporter for scripts/test.ts: keeps TEST_PROGRESS_FILE up to date with the test files
// running, the last one started and the counts so far, so that the runner can say where a suite it
// had to kill was stuck and what it had done (the JSON reporter writes only at the very end).
import { writeFileSync } from "node:fs";
import { relative } from "node:path";
import type { Reporter, TestCase, TestModule } from "vitest/node";

export interface Progress {
  running: string[];
  lastStarted: string | null;
  passed: number;
  failed: number;
  skipped: number;
}

export default class ProgressReporter implements Reporter {
  private readonly file = process.env.TEST_PROGRESS_FILE;
  private readonly state: Progress = { running: [], lastStarted: null, passed: 0, failed: 0, skipped: 0 };

  onTestModuleStart(m: TestModule): void {
    const name = relative(process.cwd(), m.moduleId);
    this.state.running.push(name);
    this.state.lastStarted = name;
    this.write();
  }

  onTestCaseResult(t: TestCase): void {
    const s = t.result().state;
    if (s === "passed") this.state.passed++;
    else if (s === "failed") this.state.failed++;
    else this.state.skipped++;
    this.write();
  }

  onTestModuleEnd(m: TestModule): void {
    const name = relative(process.cwd(), m.moduleId);
    this.state.running = this.state.running.filter((r) => r !== name);
    this.write();
  }

  private write(): void {
    if (this.file) writeFileSync(this.file, JSON.stringify(this.state));
  }
}
