import { spawn, type SpawnOptions } from "node:child_process";

/** Runs a command to completion, capturing its output; rejects with its stderr (or stdout) on a non-zero exit. */
export function capture(cmd: string, args: string[], opts: SpawnOptions = {}, label = `${cmd} ${args.join(" ")}`): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { ...opts, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, ...opts.env } });
    let stdout = "";
    let stderr = "";
    child.stdout!.on("data", (d) => (stdout += d));
    child.stderr!.on("data", (d) => (stderr += d));
    child.on("error", reject);
    child.on("close", (code) => (code === 0 ? resolve({ stdout, stderr }) : reject(new Error(`${label} exited ${code}\n${stderr || stdout}`))));
  });
}
