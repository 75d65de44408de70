import { fileURLToPath } from "node:url";
import type { TestProject } from "vitest/node";
import { startFakeGraph } from "./fake-graph.ts";

/** Meta's OpenAPI description of the Cloud API, vendored with its source and licence (test/reference/README.md). */
export const REFERENCE = fileURLToPath(new URL("../reference/whatsapp-cloud-api-v23.openapi.yaml", import.meta.url));

export default async function setup(project: TestProject) {
  const fake = await startFakeGraph(REFERENCE);
  project.provide("graphUrl", fake.url);
  return async () => {
    const invalid = fake.invalid();
    await fake.close();
    // A request the driver should not have made, a webhook Meta would not send, or an answer Meta would not give:
    // the run fails even if the test that caused it looked elsewhere.
    if (invalid.length > 0) {
      throw new Error(`the fake Graph API saw ${invalid.length} invalid request(s), webhook(s) or answer(s):\n${invalid.slice(0, 20).map((r) => `${r.method} ${r.path}: ${r.errors.slice(0, 4).join("; ")}`).join("\n")}`);
    }
  };
}
