import type { TestProject } from "vitest/node";
import { startAll } from "../support/setup-scope.ts";
import { startDev } from "./harness.ts";

// One `npm run dev` for the whole end-to-end suite (starting it takes seconds).
export default function setup(project: TestProject) {
  return startAll(async (onClose) => {
    const dev = await startDev();
    onClose(() => dev.stop());
    project.provide("baseUrl", dev.baseUrl);
    project.provide("persistTo", dev.persistTo);
  });
}
