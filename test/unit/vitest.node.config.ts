// Unit tests that need no Workers runtime (the Session DO's outbox over node:sqlite, the import
// rules of the source tree): plain Node.
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    name: "unit-node",
    root: import.meta.dirname + "/../..",
    include: ["test/unit/**/*.node.test.ts"],
    environment: "node",
  },
});
