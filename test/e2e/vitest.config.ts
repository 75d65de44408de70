import { BaseSequencer, type TestSpecification } from "vitest/node";
import { defineConfig } from "vitest/config";

/** The end-to-end files first, in vitest's usual order, then the browser's: they see the dev server as when they ran alone. */
class BrowserLast extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const browser = (f: TestSpecification) => f.moduleId.includes("/test/browser/");
    return [...sorted.filter((f) => !browser(f)), ...sorted.filter(browser)];
  }
}

// End-to-end and browser: a real `npm run dev` (wrangler dev + the natively run compile server),
// spoken to over HTTP and driven through Debian's Chromium. One `npm run dev` for both (starting it
// takes seconds): `npm test` runs this config; `npm run test:browser` runs the browser file alone.
export default defineConfig({
  test: {
    name: "e2e",
    root: import.meta.dirname + "/../..",
    include: ["test/e2e/**/*.e2e.test.ts", "test/browser/**/*.browser.test.ts"],
    globalSetup: ["test/e2e/global-setup.ts"],
    environment: "node",
    fileParallelism: false,
    sequence: { sequencer: BrowserLast },
    testTimeout: 60_000,
    hookTimeout: 240_000,
    // A shared machine can be slow: a browser step waits up to 15 s for what it expects to appear.
    expect: { poll: { timeout: 15_000, interval: 100 } },
  },
});
