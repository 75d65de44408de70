import { routeLogs } from "../../src/platform/log.ts";

/**
 * Log lines go to the runtime's own console, not the runner's: the runner's `console` reports each
 * line to the test process, and a line that background work (a queue batch, an alarm, a flush) logs
 * after its test file ended would keep that file from finishing. Info lines (a request, a batch, a
 * flush) are dropped to keep test output readable; warnings and errors are printed.
 */
export function routeTestLogs(): boolean {
  const runtime = (globalThis as { __console?: Console }).__console;
  if (!runtime) return false;
  routeLogs({ log: () => {}, warn: (line: string) => runtime.warn(line), error: (line: string) => runtime.error(line) });
  return true;
}
