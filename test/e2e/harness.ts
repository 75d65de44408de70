// Starts the whole system as a user would (`npm run dev`) on free ports with its own state
// directory, and gives tests and benchmarks a client's view of it.
import { spawn, type ChildProcess } from "node:child_process";
import { createWriteStream, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { capture } from "../../scripts/capture.ts";
import { freePort } from "../../scripts/free-port.ts";

export const ROOT = resolve(import.meta.dirname, "../..");

export { freePort };

export interface DevServer {
  baseUrl: string;
  persistTo: string;
  /** Runs `npm run -s keys -- ARGS` against this server's D1 and returns stdout. */
  keys(args: string[]): Promise<string>;
  /** Creates a new account on `plan` and returns its key (the CLI's last line). */
  createKey(plan?: "free" | "pro" | "enterprise", extra?: string[]): Promise<string>;
  stop(): Promise<void>;
  /** SIGKILL of the whole process tree of `npm run dev` at once (a power cut); the state directory stays. */
  kill(): Promise<void>;
}

/** `pid` and every process below it (their own process groups included), from /proc. */
function processTree(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // The parent pid is the 4th field, after the command name in parentheses (which may hold spaces).
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
    } catch {
      /* gone meanwhile */
    }
  }
  const out: number[] = [];
  const walk = (p: number) => {
    out.push(p);
    for (const c of children.get(p) ?? []) walk(c);
  };
  walk(pid);
  return out;
}

async function run(cmd: string, args: string[], env: NodeJS.ProcessEnv): Promise<string> {
  return (await capture(cmd, args, { cwd: ROOT, env })).stdout;
}

async function waitForHealth(baseUrl: string, child: ChildProcess, timeoutMs: number, output: () => string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`npm run dev exited with ${child.exitCode}:\n${output()}`);
    try {
      const res = await fetch(`${baseUrl}/health`);
      if (res.status === 200) return;
    } catch {
      /* not up yet */
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`npm run dev did not answer /health within ${timeoutMs} ms:\n${output()}`);
}

/** `persistTo`: an existing state directory to start on (kept on stop); default a fresh one, removed on stop. */
export async function startDev(opts: { env?: NodeJS.ProcessEnv; timeoutMs?: number; persistTo?: string } = {}): Promise<DevServer> {
  const port = await freePort();
  const compilePort = await freePort();
  const persistTo = opts.persistTo ?? mkdtempSync(join(tmpdir(), "texmsg-e2e-"));
  const env = { PORT: String(port), COMPILE_PORT: String(compilePort), PERSIST_TO: persistTo, ...opts.env };
  let output = "";
  const child = spawn("npm", ["run", "-s", "dev"], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"], detached: true });
  // DEV_LOG=path keeps the whole output of `npm run dev` (e.g. to read a benchmark's queue batch timings).
  const logFile = process.env.DEV_LOG ? createWriteStream(process.env.DEV_LOG) : null;
  const keep = (d: Buffer) => {
    logFile?.write(d);
    output = (output + d.toString()).slice(-20_000);
  };
  child.stdout!.on("data", keep);
  child.stderr!.on("data", keep);
  const baseUrl = `http://127.0.0.1:${port}`;
  const stop = async () => {
    if (child.exitCode === null && child.pid) {
      try {
        process.kill(-child.pid, "SIGTERM");
      } catch {
        /* gone */
      }
      await new Promise((r) => {
        const t = setTimeout(() => {
          try {
            process.kill(-child.pid!, "SIGKILL");
          } catch {
            /* gone */
          }
          r(undefined);
        }, 5000);
        child.once("exit", () => {
          clearTimeout(t);
          r(undefined);
        });
      });
    }
    if (!opts.persistTo) rmSync(persistTo, { recursive: true, force: true });
  };
  const kill = async () => {
    if (child.exitCode !== null || !child.pid) return;
    const exited = new Promise((r) => child.once("exit", r));
    for (const pid of processTree(child.pid)) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        /* gone */
      }
    }
    await exited;
  };
  try {
    await waitForHealth(baseUrl, child, opts.timeoutMs ?? 180_000, () => output);
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    baseUrl,
    persistTo,
    keys: (args) => keysCli(persistTo, args),
    createKey: (plan = "pro", extra = []) => createKeyWithCli(persistTo, plan, extra),
    stop,
    kill,
  };
}

/** `npm run -s keys -- ARGS` against the local D1 in `persistTo`, as a user would run it; its stdout. */
export function keysCli(persistTo: string, args: string[]): Promise<string> {
  return oneAtATime(`${persistTo}.keys-cli.lock`, async () => {
    // The local D1 is a SQLite file the dev server's workerd writes too, and a second process gets
    // SQLITE_BUSY rather than a wait; the CLI's statements run as one batch, so a refused run wrote nothing.
    for (let attempt = 1; ; attempt++) {
      try {
        return await run("npm", ["run", "-s", "keys", "--", ...args], { PERSIST_TO: persistTo });
      } catch (err) {
        if (attempt >= 5 || !String((err as Error).message).includes("SQLITE_BUSY")) throw err;
        await new Promise((r) => setTimeout(r, 200 * attempt));
      }
    }
  });
}

/**
 * Runs `fn` while holding `lock` (a directory: mkdir is atomic), across the suite's worker processes. Two
 * `wrangler d1 execute --local` writing one D1 at once fail with SQLITE_BUSY; the files run side by side,
 * so their CLI runs wait for each other (they are CPU-bound: little is lost).
 */
async function oneAtATime<T>(lock: string, fn: () => Promise<T>, timeoutMs = 10 * 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      if (Date.now() > deadline) throw new Error(`${lock} held for over ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  try {
    return await fn();
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

/** A new account on `plan` with one key: the CLI prints the key alone on its last line. */
export async function createKeyWithCli(persistTo: string, plan: "free" | "pro" | "enterprise" = "pro", extra: string[] = []): Promise<string> {
  const out = await keysCli(persistTo, ["create", "--name", "e2e", "--plan", plan, ...extra]);
  return out.trim().split("\n").pop()!.trim();
}
