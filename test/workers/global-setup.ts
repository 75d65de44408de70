import type { TestProject } from "vitest/node";

// Runs in Node before the Workers tests. Services outside the Worker that tests need (fakes of
// outside APIs) are started here and their URLs provided to the pool. The compile server is
// started by test/workers/compile/global-setup.ts.
export default async function setup(_project: TestProject) {
  return async () => {};
}
