import { existsSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { TestProject } from "vitest/node";
import { startFakeGraph } from "./fake-graph.ts";

declare module "vitest" {
  export interface ProvidedContext {
    graphUrl: string;
  }
}

/**
 * The reference lives beside the repository: `../shared/reference/` from the repo root (in CI
 * `shared/` is cloned next to it). A git worktree one level deeper finds it one more level up;
 * WHATSAPP_REFERENCE overrides.
 */
const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const FILE = "shared/reference/whatsapp-cloud-api-v23.openapi.yaml";
const candidates = [process.env.WHATSAPP_REFERENCE, resolve(repoRoot, "..", FILE), resolve(repoRoot, "../..", FILE)].filter((p): p is string => !!p);
export const REFERENCE = candidates.find((p) => existsSync(p)) ?? candidates[0]!;

export default async function setup(project: TestProject) {
  const fake = await startFakeGraph(REFERENCE);
  project.provide("graphUrl", fake.url);
  return async () => fake.close();
}
