// The compile server's tests: plain Node environment, real TeX, generous timeouts.
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    name: "compile-server",
    root: import.meta.dirname,
    include: ["test/**/*.test.ts"],
    environment: "node",
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // each file starts its own server with engine pools; 2-core CI: one file at a time
    fileParallelism: false,
    globalSetup: ["test/global-setup.ts"],
  },
});
