// The test runner's own tests (scripts/test.ts): plain Node, no TeX, no Workers runtime.
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    name: "runner",
    root: import.meta.dirname + "/../..",
    include: ["test/runner/*.test.ts"],
    environment: "node",
    testTimeout: 90_000,
  },
});
