import type { TestProject } from "vitest/node";

// Runs in Node before the Workers tests. Services outside the Worker that tests need (the natively
// run compile server, fakes of outside APIs) are started here and their URLs provided to the pool.
declare module "vitest" {
  export interface ProvidedContext {
    compilerUrl: string;
  }
}

export default async function setup(project: TestProject) {
  project.provide("compilerUrl", process.env.COMPILER_URL ?? "");
  return async () => {};
}
