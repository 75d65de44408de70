import type { SpawnOptions } from "node:child_process";
import { capture } from "./capture.ts";
import { dirname, join } from "node:path";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
/** wrangler's CLI entry, run with this Node (24, from the `node` devDependency) rather than the system one. */
export const WRANGLER_BIN: string = join(dirname(require.resolve("wrangler/package.json")), "bin", "wrangler.js");

export function wranglerArgs(args: string[]): [string, string[]] {
  return [process.execPath, [WRANGLER_BIN, ...args]];
}

/** Runs wrangler to completion, capturing its output. Rejects with stderr on a non-zero exit. */
export function runWrangler(args: string[], opts: SpawnOptions = {}): Promise<{ stdout: string; stderr: string }> {
  const [cmd, argv] = wranglerArgs(args);
  return capture(cmd, argv, { ...opts, env: { WRANGLER_SEND_METRICS: "false", ...opts.env } }, `wrangler ${args.join(" ")}`);
}
