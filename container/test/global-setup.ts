// The shared project's setup: the TeX check, then the one compile server that its test files all
// send their jobs to at the same time; its URL reaches them through inject("sharedCompilerUrl").
import type { TestProject } from "vitest/node";
import { startAll } from "../../test/support/setup-scope.ts";
import { testServer } from "./helpers.ts";
import { SHARED_OPTIONS } from "./shared-server.ts";
import texSetup from "./tex-setup.ts";

export default function setup(project: TestProject) {
  texSetup();
  return startAll(async (onClose) => {
    const s = await testServer(SHARED_OPTIONS);
    onClose(() => s.close());
    project.provide("sharedCompilerUrl", s.url);
  });
}
