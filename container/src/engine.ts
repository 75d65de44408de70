// How an engine (or a bib tool) process is started: command line, empty hardened
// environment, resource limits, own process group.
import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { Config, Engine } from "./config.ts";

export const MAIN_BASENAME = "main";
export const MAIN_FILE = "main.tex";
export const READY_MARKER = "TEXPOOL-READY";

const HERE = path.dirname(fileURLToPath(import.meta.url));
export const LUA_SANDBOX = path.join(HERE, "lua", "sandbox.lua");
if (!/^[A-Za-z0-9_./-]+$/.test(LUA_SANDBOX)) {
  throw new Error(`install path unsuitable for TeX: ${LUA_SANDBOX}`);
}

/**
 * The first line given to the engine. It runs after the format is loaded:
 * announce readiness on stdout (\message flushes the terminal), block on one
 * line from stdin (the "go"), switch to batch mode and read main.tex. The
 * engine is started in scrollmode only because TeX refuses to \read from the
 * terminal in batch/nonstop mode; user input is only ever read in batchmode.
 * For lualatex the Lua sandbox is installed before anything of the user runs.
 */
export function bootstrapLine(engine: Engine, jobDir: string): string {
  const lua =
    engine === "lualatex"
      ? `\\directlua{TEXPOOL_JOBDIR="${jobDir}" dofile("${LUA_SANDBOX}")}`
      : "";
  return (
    `\\message{${READY_MARKER}}` +
    `\\begingroup\\endlinechar=-1 \\read-1to\\x\\endgroup` +
    lua +
    `\\batchmode\\input ${MAIN_FILE} `
  );
}

export function engineArgs(engine: Engine, jobDir: string): string[] {
  const args = [
    `-jobname=${MAIN_BASENAME}`,
    "-interaction=scrollmode",
    "-halt-on-error",
    "-file-line-error",
    "-no-shell-escape",
  ];
  if (engine === "lualatex") args.push("--nosocket");
  args.push(bootstrapLine(engine, jobDir));
  return args;
}

/** The complete environment of an engine or bib process: nothing inherited. */
export function engineEnv(jobDir: string): Record<string, string> {
  return {
    PATH: "/usr/local/bin:/usr/bin:/bin",
    HOME: jobDir,
    LANG: "C.UTF-8",
    TZ: "UTC",
    TMPDIR: jobDir,
    TEXMFOUTPUT: jobDir,
    TEXMFVAR: path.join(jobDir, ".texmf-var"),
    openin_any: "p",
    openout_any: "p",
    shell_escape: "f",
    shell_escape_commands: "",
    parse_first_line: "f",
    MKTEXTEX: "0",
    MKTEXTFM: "0",
    MKTEXPK: "0",
    MKTEXMF: "0",
    MKTEXFMT: "0",
    MKOCP: "0",
    MKOFM: "0",
    max_print_line: "10000",
    error_line: "254",
    half_error_line: "238",
  };
}

export interface SpawnOptions {
  cwd: string;
  cpuSeconds: number;
  memoryBytes: number;
  fileBytes: number;
  uid?: number;
  gid?: number;
}

/** Spawns `cmd args` under prlimit in its own process group with the engine environment. */
export function spawnLimited(cmd: string, args: string[], o: SpawnOptions): ChildProcess {
  const env = engineEnv(o.cwd);
  const limited = [
    `--cpu=${o.cpuSeconds}`,
    `--as=${o.memoryBytes}`,
    `--fsize=${o.fileBytes}`,
    "--core=0",
    "--",
    cmd,
    ...args,
  ];
  return spawn("/usr/bin/prlimit", limited, {
    cwd: o.cwd,
    env,
    detached: true, // own process group: the whole group is killed at the deadline
    stdio: ["pipe", "pipe", "pipe"],
    uid: o.uid,
    gid: o.gid,
  });
}

export function spawnOptions(cfg: Config, cwd: string): SpawnOptions {
  return {
    cwd,
    cpuSeconds: cfg.limits.cpuSeconds,
    memoryBytes: cfg.limits.memoryBytes,
    fileBytes: cfg.limits.maxOutputFileBytes,
    uid: cfg.engineUid,
    gid: cfg.engineGid,
  };
}

/** Kills the whole process group of a detached child; ignores already-dead groups. */
export function killGroup(child: ChildProcess, signal: NodeJS.Signals = "SIGKILL"): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    /* already gone */
  }
}
