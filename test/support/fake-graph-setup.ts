import { fileURLToPath } from "node:url";
import type { TestProject } from "vitest/node";
import { startFakeGraph } from "./fake-graph.ts";

/** Meta's OpenAPI description of the Cloud API, vendored with its source and licence (test/reference/README.md). */
export const REFERENCE = fileURLToPath(new URL("../reference/whatsapp-cloud-api-v23.openapi.yaml", import.meta.url));

export default async function setup(project: TestProject) {
  const fake = await startFakeGraph(REFERENCE);
  project.provide("graphUrl", fake.url);
  return async () => fake.close();
}
