import { defineConfig } from "vitest/config";

// End-to-end: a real `npm run dev` (wrangler dev + the natively run compile server), spoken to over HTTP.
export default defineConfig({
  test: {
    name: "e2e",
    root: import.meta.dirname + "/../..",
    include: ["test/e2e/**/*.e2e.test.ts"],
    globalSetup: ["test/e2e/global-setup.ts"],
    environment: "node",
    fileParallelism: false,
    testTimeout: 60_000,
    hookTimeout: 240_000,
  },
});
