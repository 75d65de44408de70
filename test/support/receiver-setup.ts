import type { TestProject } from "vitest/node";
import { closedPort, startReceiver } from "./receiver.ts";
import { startAll } from "./setup-scope.ts";

// vitest globalSetup: one webhook receiver for the whole Workers test run; tests reach it on
// 127.0.0.1 through inject("receiverUrl").
export default function setup(project: TestProject) {
  return startAll(async (onClose) => {
    const receiver = await startReceiver();
    onClose(() => receiver.close());
    project.provide("receiverUrl", receiver.url);
    project.provide("deadUrl", `http://127.0.0.1:${await closedPort()}`);
  });
}
