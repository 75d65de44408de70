import { join } from "node:path";
import { BaseSequencer, type TestSpecification } from "vitest/node";
import { defineConfig } from "vitest/config";

const root = join(import.meta.dirname, "../..");

/**
 * The files that take longest start first (most of their time is waiting: a key cache running out, a
 * restart, queues), so the short ones fill the cores meanwhile instead of leaving one file alone at the end.
 */
const LONGEST_FIRST = ["hard-stop.e2e", "platform.e2e", "console.browser", "compile.e2e", "webhooks.e2e", "campaigns.e2e"];
class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (f: TestSpecification) => {
      const i = LONGEST_FIRST.findIndex((name) => f.moduleId.endsWith(`/${name}.test.ts`));
      return i === -1 ? LONGEST_FIRST.length : i;
    };
    return sorted.map((f, i) => ({ f, i })).sort((a, b) => rank(a.f) - rank(b.f) || a.i - b.i).map(({ f }) => f);
  }
}

// Every `wrangler` the files start (each key the CLI creates, each `npm run dev` and its migrations) loads
// the same large bundle: Node's compile cache keeps its compiled code from run to run.
process.env.NODE_COMPILE_CACHE ??= join(root, "node_modules", ".cache", "node-compile");

// End-to-end and browser: a real `npm run dev` (wrangler dev + the natively run compile server),
// spoken to over HTTP and driven through Debian's Chromium. One `npm run dev` for both (starting it
// takes seconds): `npm test` runs this config; `npm run test:browser` runs the browser file alone.
// The files run side by side against it: each works in accounts of its own (a key the CLI creates) and
// asserts nothing about the server as a whole. hard-stop.e2e kills and restarts a stack of its own (own
// ports and state directory), never the shared one, so it runs beside them too.
export default defineConfig({
  test: {
    name: "e2e",
    root,
    include: ["test/e2e/**/*.e2e.test.ts", "test/browser/**/*.browser.test.ts"],
    globalSetup: ["test/e2e/global-setup.ts"],
    environment: "node",
    fileParallelism: true,
    // three at a time: with four, at a load of about 25, CLI runs and a stack start ran out of time (they are CPU)
    maxWorkers: 3,
    sequence: { sequencer: LongestFirst },
    // a hang guard, not a speed bound: side by side on a loaded machine a file's steps take longer
    testTimeout: 120_000,
    hookTimeout: 240_000,
    // A shared machine can be slow, and the files run side by side: a browser step waits up to 30 s for
    // what it expects to appear.
    expect: { poll: { timeout: 30_000, interval: 100 } },
  },
});
