import { defineConfig } from "vitest/config";

// Browser: Debian's Chromium, driven by playwright-core, against a real `npm run dev` (the same
// global setup as the end-to-end suite). One file, its steps in order, like a person using the console.
export default defineConfig({
  test: {
    name: "browser",
    root: import.meta.dirname + "/../..",
    include: ["test/browser/**/*.browser.test.ts"],
    globalSetup: ["test/e2e/global-setup.ts"],
    environment: "node",
    fileParallelism: false,
    testTimeout: 60_000,
    hookTimeout: 240_000,
    // A shared machine can be slow: a step waits up to 15 s for what it expects to appear.
    expect: { poll: { timeout: 15_000, interval: 100 } },
  },
});
