import { spawn, type SpawnOptions } from "node:child_process";
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
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, argv, { ...opts, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, WRANGLER_SEND_METRICS: "false", ...opts.env } });
    let stdout = "";
    let stderr = "";
    child.stdout!.on("data", (d) => (stdout += d));
    child.stderr!.on("data", (d) => (stderr += d));
    child.on("error", reject);
    child.on("close", (code) => (code === 0 ? resolve({ stdout, stderr }) : reject(new Error(`wrangler ${args.join(" ")} exited ${code}\n${stderr || stdout}`))));
  });
}
