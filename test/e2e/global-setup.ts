import type { TestProject } from "vitest/node";
import { startDev } from "./harness.ts";

declare module "vitest" {
  export interface ProvidedContext {
    baseUrl: string;
    persistTo: string;
  }
}

// One `npm run dev` for the whole end-to-end suite (starting it takes seconds).
export default async function setup(project: TestProject) {
  const dev = await startDev();
  project.provide("baseUrl", dev.baseUrl);
  project.provide("persistTo", dev.persistTo);
  return () => dev.stop();
}
