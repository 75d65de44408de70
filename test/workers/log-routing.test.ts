import { afterEach, describe, expect, it, vi } from "vitest";
import { log } from "../../src/platform/log.ts";
import { routeTestLogs } from "./log-routing.ts";

describe("test log routing: no line goes through the runner's console", () => {
  afterEach(() => vi.restoreAllMocks());

  it("info, warn and error lines reach the runtime's console, never the runner's, so none can be held after a file ends", () => {
    const runtime = (globalThis as { __console?: Console }).__console;
    expect(runtime, "the pool keeps the runtime's console as __console").toBeDefined();
    expect(runtime).not.toBe(console);
    expect(routeTestLogs()).toBe(true);
    const runner = [vi.spyOn(console, "log"), vi.spyOn(console, "warn"), vi.spyOn(console, "error")];
    const toRuntime = [vi.spyOn(runtime!, "warn").mockImplementation(() => {}), vi.spyOn(runtime!, "error").mockImplementation(() => {})];
    log.info("queue batch", { queue: "texmsg-events" });
    log.warn("routing check");
    log.error("routing check");
    for (const spy of runner) expect(spy).not.toHaveBeenCalled();
    expect(toRuntime[0]).toHaveBeenCalledTimes(1);
    expect(toRuntime[1]).toHaveBeenCalledTimes(1);
  });
});
