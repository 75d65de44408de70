// How an engine (or a bib tool) process is started: command line, empty hardened
// environment, resource limits, own process group, bubblewrap sandbox.
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { promises as fs } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { Config, Engine } from "./config.ts";
import { bwrapArgs, runtimeBinPath, runtimeLuaPath, SANDBOX_BIN, SANDBOX_FMT, SANDBOX_JOB_DIR, SANDBOX_LUA } from "./sandbox.ts";
import { jobsDir } from "./workdir.ts";
import { TEX_SPECIAL_CHAR } from "./names.ts";
import { closeOf } from "./supervise.ts";
import { leaseOwner, ownerOf, releaseOwner } from "./uids.ts";

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
 * line from stdin (the "go" line, see goLine), switch to batch mode and run it.
 * The engine is started in scrollmode only because TeX refuses to \read from
 * the terminal in batch/nonstop mode; user input is only ever read in batchmode.
 * For lualatex the Lua sandbox is installed before anything of the user runs.
 * `named`: the engine was started with its job's name (-jobname; see warmJobname).
 */
export function bootstrapLine(engine: Engine, jobDir: string, luaSandbox = LUA_SANDBOX, shellEscape = false, named = false): string {
  // with shell escape (only ever in the bubblewrap sandbox) the Lua sandbox keeps os.execute/io.popen:
  // LuaTeX runs \write18 through them
  const shell = shellEscape ? " TEXPOOL_SHELL=true" : "";
  const lua =
    engine === "lualatex"
      ? `\\directlua{TEXPOOL_JOBDIR="${jobDir}"${shell} dofile("${luaSandbox}")}`
      : "";
  // pdfTeX reads its font map (4.5 MB with the full font set, ~100 ms) at the first page unless
  // told earlier: a warm engine reads it while it waits, so jobs do not pay for it.
  const map = engine === "pdflatex" ? "\\pdfmapfile{pdftex.map}" : "";
  return (
    `\\message{${READY_MARKER}}` +
    map +
    (engine === "xelatex" && named ? XETEX_FONT_WARMUP : "") +
    `\\begingroup\\endlinechar=-1 \\global\\read-1to\\texpoolgo\\endgroup` +
    lua +
    `\\batchmode\\texpoolgo `
  );
}

/**
 * XeTeX sets up fontconfig at the first font it loads: its configuration, the caches of every font
 * folder and a list of all fonts (~50 ms of CPU with TeX Live's and the system's fonts, more with
 * every font package installed), at every job's first font. A warm engine loads LaTeX's default
 * font while it waits (a missing one is no error here), so its job does not pay for it. Only with
 * -jobname: TeX opens the log at the first \font, and without a name it would call the job `texput`.
 * Not for a job that brings fonts: fontconfig would list its folder before they are written there.
 */
export const XETEX_FONT_WARMUP = '\\begingroup\\suppressfontnotfounderror=1 \\font\\texpoolfont="[lmroman10-regular]"\\endgroup';

/**
 * The job name an engine is started with when its job's main file is known in advance, so that it
 * can warm up before its job (XETEX_FONT_WARMUP); undefined: started without one, the main file
 * names the job (see goLine). xelatex only, and names TeX's command line takes as they are.
 */
export function warmJobname(engine: Engine, base: string): string | undefined {
  return engine === "xelatex" && PLAIN_NAME.test(base) ? base : undefined;
}

/** The draft option of graphicx/graphics: images are drawn as boxes and never read. */
export const DRAFT_OPTIONS = "\\PassOptionsToPackage{draft}{graphicx}\\PassOptionsToPackage{draft}{graphics}";

export interface GoOptions {
  /** The main file's name in the engine's working directory (a validated project name). */
  mainFile: string;
  draft: boolean;
  /** The process was started from a dumped preamble format (see preamble.ts): skip the preamble. */
  preamble: boolean;
}

/** A name TeX's \input primitive reads as it is. */
export const PLAIN_NAME = /^[A-Za-z0-9_][A-Za-z0-9_.+-]*$/;

/**
 * The line a warm engine reads before it starts the document. It is built by the
 * server only, from validated names. With a preamble format, the main file is
 * opened and its lines up to \begin{document} are skipped (mylatexformat's
 * scanner, saved in the format under \texpoolscan), so line numbers stay right.
 * The engines are started without -jobname: the file opened here names the job,
 * so \jobname is the main file's name without its extension, as with a bare engine.
 */
export function goLine(o: GoOptions): string {
  const draft = o.draft ? DRAFT_OPTIONS : "";
  if (PLAIN_NAME.test(o.mainFile)) {
    // \relax ends the file name (TeX drops trailing spaces of the line it \read)
    const input = o.preamble ? `\\expandafter\\texpoolscan\\texpoolinput ${o.mainFile}\\relax` : `\\input ${o.mainFile}\\relax`;
    return `\\relax${draft}${input}`;
  }
  // spaces and letters beyond ASCII: LaTeX's \input{} quotes and sanitises the name (the primitive
  // would expand pdfTeX's active UTF-8 characters); precompiled preambles take plain names only
  if (o.preamble || TEX_SPECIAL_CHAR.test(o.mainFile)) throw new Error(`unsafe main file name: ${o.mainFile}`);
  return `\\relax${draft}\\input{${o.mainFile}}\\relax`;
}

/**
 * The engine's command line. `jobDir` is the host directory; in the sandbox the
 * engine sees it (and the Lua sandbox) at fixed paths.
 */
export function engineArgs(engine: Engine, jobDir: string, sandboxed = false, luaSandbox = LUA_SANDBOX, fmt?: string, shellEscape = false, jobname?: string, fontsLater = false): string[] {
  if (shellEscape && !sandboxed) throw new Error("shell escape runs only in the sandbox");
  const args = [
    ...(fmt ? [`-fmt=${fmt}`] : []),
    // otherwise the first file opened names the job (a preamble format's \everyjob may open the log first)
    ...(jobname ? [`-jobname=${jobname}`] : []),
    "-interaction=scrollmode",
    "-halt-on-error",
    "-file-line-error",
    // otherwise restricted shell escape: only the programs of RESTRICTED_COMMANDS (engineEnv)
    shellEscape ? "-shell-escape" : "-shell-restricted",
  ];
  if (engine === "lualatex") args.push("--nosocket");
  // xelatex writes main.xdv only; the server runs the PDF driver after the last pass (driver.ts)
  if (engine === "xelatex") args.push("-no-pdf");
  // fonts the job brings are not in its folder yet: fontconfig must see them when it starts
  const named = jobname !== undefined && !fontsLater;
  args.push(sandboxed ? bootstrapLine(engine, SANDBOX_JOB_DIR, SANDBOX_LUA, shellEscape, named) : bootstrapLine(engine, jobDir, luaSandbox, false, named));
  return args;
}

/**
 * What a document may run without shellEscape (TeX Live's restricted shell escape, with a
 * shorter list than its default): repstopdf, so EPS figures work in pdflatex as with a
 * bare TeX Live, and kpsewhich, which packages ask for kpathsea's settings (TeX Live 2024's
 * hardwrap, loaded by the tufte classes, reads max_print_line through it and fails without).
 * They run in the job's sandbox like everything else.
 */
export const RESTRICTED_COMMANDS = "repstopdf,kpsewhich";

/**
 * The complete environment of an engine or bib process: nothing inherited. When the
 * process works in a subfolder (`subdir`, the main file's folder), files are also
 * looked up from the project root, as the main file's folder comes first.
 */
export function engineEnv(jobDir: string, subdir = "", shellEscape = false): Record<string, string> {
  const root: Record<string, string> = subdir
    ? { TEXINPUTS: `.:${jobDir}:`, BIBINPUTS: `.:${jobDir}:`, BSTINPUTS: `.:${jobDir}:` }
    : {};
  return {
    ...root,
    PATH: "/usr/local/bin:/usr/bin:/bin",
    HOME: jobDir,
    LANG: "C.UTF-8",
    TZ: "UTC",
    TMPDIR: jobDir,
    TEXMFOUTPUT: jobDir,
    TEXMFVAR: path.join(jobDir, ".texmf-var"),
    // with shell escape a program reads what the sandbox shows anyway; packages probe absolute
    // paths (ifplatform, which minted uses, tells Unix by \IfFileExists{/dev/null})
    openin_any: shellEscape ? "a" : "p",
    openout_any: "p",
    shell_escape: shellEscape ? "t" : "p",
    shell_escape_commands: RESTRICTED_COMMANDS,
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
  cwd: string; // the job directory on the host
  /** Work in this folder of the job directory (relative, validated); default its root. */
  subdir?: string | undefined;
  /** Host path of a format file to bind read-only at SANDBOX_FMT (sandbox only). */
  fmtFile?: string | undefined;
  sandbox: boolean;
  bwrapPath: string;
  cpuSeconds: number;
  memoryBytes: number;
  fileBytes: number;
  uid?: number;
  gid?: number;
  /** Host path of the Lua sandbox (lualatex); default: the shipped one. */
  luaSandbox?: string;
  /** Shell escape on (sandbox only): the environment allows it, and RLIMIT_NPROC caps the programs it starts. */
  shellEscape?: boolean | undefined;
  maxProcesses?: number | undefined;
  /**
   * Start held: the process waits for one line on stdin before it runs the command (so the caller
   * can move it into the job's control group before it can fork); a line written to its stdin releases it.
   */
  held?: boolean | undefined;
  /** The job's processes are capped by its control group: no per-uid RLIMIT_NPROC (shared by every job). */
  groupCapped?: boolean | undefined;
  /** Added to the engine environment (paths as the process sees them: see jobDirSeen). */
  env?: Record<string, string> | undefined;
  /** Host path of the generated METAFONT fonts (mf.ts), bound read-only in the sandbox. */
  fontCache?: string | undefined;
  /** Host path of a warm driver's folder (driver-warm.ts), bound read-only in the sandbox. */
  driverDir?: string | undefined;
  /** Host path of the program guards (sandbox.ts, runtimeBinPath), first in PATH in the sandbox. */
  binDir?: string | undefined;
}

/** The job directory as its processes see it: /job in the sandbox. */
export function jobDirSeen(hostDir: string, sandboxed: boolean): string {
  return sandboxed ? SANDBOX_JOB_DIR : hostDir;
}

/**
 * Spawns `cmd args` under prlimit in its own process group with the engine
 * environment; with `o.sandbox`, inside bwrap (prlimit execs bwrap, so the limits
 * apply to bwrap and everything in the sandbox, and the child's pid is bwrap's:
 * killing its process group kills bwrap, whose sandbox init then dies by
 * --die-with-parent, taking every process of the sandbox's pid namespace with it).
 * `uid`/`gid` are set before bwrap runs, so bwrap itself never has root privileges.
 */
export function spawnLimited(cmd: string, args: string[], o: SpawnOptions): ChildProcess {
  const limits = [`--cpu=${o.cpuSeconds}`, `--as=${o.memoryBytes}`, `--fsize=${o.fileBytes}`, "--core=0"];
  if (o.shellEscape) {
    if (!o.sandbox) throw new Error("shell escape runs only in the sandbox");
    if (!o.groupCapped) limits.push(`--nproc=${o.maxProcesses ?? 1000}`);
  }
  limits.push("--");
  let argv: string[];
  let env: Record<string, string>;
  const sub = o.subdir ?? "";
  if (o.sandbox) {
    // LuaTeX 1.18 (TeX Live 2024's Debian) applies openin_any to Lua's io.open too, and luaotfload
    // opens TeX tree files by absolute path (ScriptExtensions.txt): paranoid mode would refuse them.
    // Restricted mode reads absolute paths; the sandbox shows only the TeX tree and the job, and
    // the Lua sandbox limits io.open to them again
    const lua: Record<string, string> = cmd === "lualatex" && !o.shellEscape ? { openin_any: "r" } : {};
    const inner = { ...engineEnv(SANDBOX_JOB_DIR, sub, o.shellEscape === true), ...lua, ...o.env };
    if (o.binDir) inner.PATH = `${SANDBOX_BIN}:${inner.PATH ?? "/usr/bin:/bin"}`;
    const bw = bwrapArgs({
      hostDir: o.cwd,
      env: inner,
      luaSandbox: cmd === "lualatex" ? (o.luaSandbox ?? LUA_SANDBOX) : undefined,
      chdir: sub ? `${SANDBOX_JOB_DIR}/${sub}` : undefined,
      fmtFile: o.fmtFile,
      fontCache: o.fontCache,
      driverDir: o.driverDir,
      binDir: o.binDir,
    });
    argv = [...limits, o.bwrapPath, ...bw, "--", cmd, ...args];
    env = { PATH: inner.PATH ?? "/usr/bin:/bin", LANG: "C.UTF-8" };
  } else {
    argv = [...limits, cmd, ...args];
    env = { ...engineEnv(o.cwd, sub), ...o.env };
  }
  // held: `read` takes one line from the pipe (byte by byte), then the command runs with the rest of it
  const [file, fileArgs] = o.held ? ["/bin/sh", ["-c", 'read -r _ && exec "$@"', "sh", "/usr/bin/prlimit", ...argv]] : ["/usr/bin/prlimit", argv];
  return spawn(file, fileArgs, {
    // in the sandbox the working folder is set inside it (--chdir): the host side never enters a
    // folder of the job's, which its programs may have swapped for a link
    cwd: sub && !o.sandbox ? path.join(o.cwd, sub) : o.cwd,
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
    sandbox: cfg.sandbox,
    bwrapPath: cfg.bwrapPath,
    cpuSeconds: cfg.limits.cpuSeconds,
    memoryBytes: cfg.limits.memoryBytes,
    fileBytes: cfg.limits.maxOutputFileBytes,
    // the job folder's own uid (uids.ts); undefined: the server's
    uid: ownerOf(cwd)?.uid,
    gid: ownerOf(cwd)?.gid,
    luaSandbox: runtimeLuaPath(cfg.jobRoot), // the copy engines can read (stageRuntimeFiles)
    binDir: runtimeBinPath(cfg.jobRoot),
    maxProcesses: cfg.limits.shellEscapeProcesses,
    fontCache: cfg.mfCacheDir,
  };
}

export interface SandboxCheck {
  ok: boolean;
  /** Why the sandbox is not usable (when !ok). */
  reason?: string;
  /** The uid the sandboxed processes run as. */
  uid?: number;
  durationMs: number;
}

/**
 * Start-up self-check: runs a shell in the sandbox, exactly as engines are run, and
 * verifies that it works and isolates: the probe must run as a non-root uid, see
 * none of /etc/passwd, the job root (other jobs), the server's code or /root, see
 * only a loopback network interface, and be able to write its own job directory.
 */
export async function checkSandbox(cfg: Config, timeoutMs = 15_000): Promise<SandboxCheck> {
  const started = Date.now();
  const dir = path.join(jobsDir(cfg), `check-${randomBytes(8).toString("hex")}`);
  const done = (r: Omit<SandboxCheck, "durationMs">): SandboxCheck => ({ ...r, durationMs: Date.now() - started });
  try {
    await fs.mkdir(jobsDir(cfg), { recursive: true, mode: 0o711 });
    await fs.mkdir(dir, { mode: 0o700 });
    const owner = leaseOwner(cfg.uids, dir, false);
    if (owner) await fs.chown(dir, owner.uid, owner.gid);
    const hidden = ["/etc/passwd", "/etc/shadow", "/root", "/home", cfg.jobRoot, HERE].map((p) => `'${p.replace(/'/g, "")}'`).join(" ");
    const script = [
      `for p in ${hidden}; do if [ -e "$p" ]; then echo "VISIBLE $p"; exit 3; fi; done`,
      // only the loopback interface: the sandbox has its own, empty network namespace
      `if grep -v -E '^ *(lo:|Inter-|face)' /proc/net/dev | grep -q .; then echo NETWORK; exit 4; fi`,
      `echo "UID $(id -u)"`,
      `echo probe > ${SANDBOX_JOB_DIR}/probe`,
    ].join("\n");
    const child = spawnLimited("/bin/sh", ["-c", script], { ...spawnOptions(cfg, dir), sandbox: true, binDir: undefined });
    child.stdin!.end();
    let out = "";
    child.stdout!.on("data", (c: Buffer) => (out += c.toString()));
    child.stderr!.on("data", (c: Buffer) => (out += c.toString()));
    const exit = await closeOf(child, timeoutMs);
    const detail = out.trim().split("\n").slice(-5).join(" | ");
    if (exit.error) return done({ ok: false, reason: `could not start ${cfg.bwrapPath}: ${exit.error.message}` });
    if (exit.code !== 0) return done({ ok: false, reason: `${cfg.bwrapPath} failed (exit ${exit.code}): ${detail || "no output"}` });
    const uid = Number(/^UID (\d+)$/m.exec(out)?.[1] ?? NaN);
    if (!Number.isInteger(uid)) return done({ ok: false, reason: `sandbox probe gave no uid: ${detail}` });
    if (uid === 0) return done({ ok: false, reason: "sandboxed processes would run as root" });
    const probe = await fs.readFile(path.join(dir, "probe"), "utf8").catch(() => "");
    if (probe.trim() !== "probe") return done({ ok: false, reason: "the sandboxed probe could not write its job directory" });
    return done({ ok: true, uid });
  } catch (e) {
    return done({ ok: false, reason: (e as Error).message });
  } finally {
    await fs.rm(dir, { recursive: true, force: true }).catch(() => {});
    await releaseOwner(dir);
  }
}
