// The bubblewrap (bwrap) sandbox every engine and bib process runs in.
//
// A process sees a read-only view of the TeX installation (and nothing else of the
// host), its own job directory read-write at /job, fresh /proc, /dev and a small
// /tmp, no network (own network namespace with only a down loopback), its own
// pid/ipc/uts/cgroup namespaces, and an empty environment apart from what TeX needs.
// bwrap is always started unprivileged: when the server runs as root it is started
// as the job folder's own uid (uids.ts) and creates an unprivileged user namespace that maps
// that uid to itself; otherwise it runs as the server's own uid. Inside, no capabilities,
// no_new_privs, no further user namespaces (--disable-userns).
import { execFile } from "node:child_process";
import { existsSync, promises as fs, readlinkSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { texBinds } from "./texroot.ts";
import type { UidRange } from "./uids.ts";

/** Where the job directory appears inside the sandbox. */
export const SANDBOX_JOB_DIR = "/job";
/** Where a precompiled preamble format appears inside the sandbox (read-only). */
export const SANDBOX_FMT = "/opt/texpool/preamble.fmt";
/** Where the Lua sandbox (src/lua/sandbox.lua) appears inside the sandbox (lualatex only). */
export const SANDBOX_LUA = "/opt/texpool/sandbox.lua";
/** Where the server's guards for programs documents may run appear inside the sandbox (read-only; first in PATH). */
export const SANDBOX_BIN = "/opt/texpool/bin";
/** Where the generated METAFONT fonts (mf.ts) appear inside the sandbox (read-only). */
export const SANDBOX_FONT_CACHE = "/opt/texpool/fonts";

/** Where a warm xelatex driver's configuration FIFO and font map appear inside its sandbox (driver-warm.ts; read-only). */
export const SANDBOX_DRIVER = "/opt/texpool/driver";

/** The METAFONT cache's environment for a job's processes (mf.ts): kpathsea looks for PK and TFM files below VARTEXFONTS. */
export function fontCacheEnv(cfg: { mfCacheDir?: string | undefined; sandbox: boolean }): Record<string, string> {
  if (!cfg.mfCacheDir) return {};
  return { VARTEXFONTS: cfg.sandbox ? SANDBOX_FONT_CACHE : cfg.mfCacheDir };
}

/**
 * Host paths bound read-only at the same place (Debian's TeX Live layout):
 *  - /usr: binaries, libraries, Perl (biber), TeX trees (/usr/share/texlive,
 *    /usr/share/texmf), fonts (/usr/share/fonts, /usr/local/share/fonts), fontconfig
 *    configuration snippets (/usr/share/fontconfig);
 *  - /etc/texmf: texmf.cnf and TeX configuration (TEXMFSYSCONFIG);
 *  - /var/lib/texmf: formats, ls-R databases, the luaotfload caches built at install
 *    time (TEXMFSYSVAR, /var/lib/texmf/luatex-cache);
 *  - /etc/fonts, /var/cache/fontconfig: fontconfig configuration and caches (xelatex);
 *  - /etc/alternatives: symlinks only; Debian's /usr/bin/bibtex points through it;
 *  - /etc/ld.so.cache: the dynamic linker's cache (speed only);
 *  - /etc/paperspecs, /etc/papersize: libpaper 2 (trixie's dvipdfmx) knows no paper size, not
 *    even a4, without its paperspecs.
 * Missing ones are skipped (--ro-bind-try); /usr is required. With a TeX root filesystem
 * (texroot.ts) all of them are its own, bound at the same places.
 */
export const RO_BINDS: readonly string[] = ["/etc/texmf", "/var/lib/texmf", "/etc/fonts", "/var/cache/fontconfig", "/etc/alternatives", "/etc/ld.so.cache", "/etc/paperspecs", "/etc/papersize"];

/** Merged-/usr symlinks at the root (Debian bookworm); a real directory is bound instead. */
const ROOT_LINKS: ReadonlyArray<readonly [string, string]> = [
  ["/bin", "usr/bin"],
  ["/sbin", "usr/sbin"],
  ["/lib", "usr/lib"],
  ["/lib64", "usr/lib64"],
];

export interface SandboxSpec {
  /** The job directory on the host; bound read-write at SANDBOX_JOB_DIR. */
  hostDir: string;
  /** The complete environment inside the sandbox. */
  env: Record<string, string>;
  /** Host path of the Lua sandbox to bind at SANDBOX_LUA (lualatex), if any. */
  luaSandbox?: string | undefined;
  /** Working directory inside the sandbox (default SANDBOX_JOB_DIR). */
  chdir?: string | undefined;
  /** Host path of a format file to bind read-only at SANDBOX_FMT, if any. */
  fmtFile?: string | undefined;
  /** Host path of the generated fonts to bind read-only at SANDBOX_FONT_CACHE, if any. */
  fontCache?: string | undefined;
  /** Host path of a warm driver's folder (the server's) to bind read-only at SANDBOX_DRIVER, if any. */
  driverDir?: string | undefined;
  /** Host path of the program guards (runtimeBinPath) to bind read-only at SANDBOX_BIN, if any. */
  binDir?: string | undefined;
}

/** /tmp inside: a small tmpfs (TMPDIR points at the job directory anyway). */
const TMP_BYTES = 16 * 1024 * 1024;

let rootLinks: string[] | undefined;
function rootLinkArgs(): string[] {
  rootLinks ??= ROOT_LINKS.flatMap(([at, target]) => {
    if (!existsSync(at)) return [];
    // merged /usr: recreate the symlink; an unmerged system: bind the real directory
    return isSymlinkTo(at, target) ? ["--symlink", target, at] : ["--ro-bind", at, at];
  });
  return rootLinks;
}

function isSymlinkTo(p: string, target: string): boolean {
  try {
    const t = readlinkSync(p);
    return t === target || t === `/${target}`;
  } catch {
    return false; // not a symlink
  }
}

/** bwrap's arguments (everything before `--`). */
export function bwrapArgs(spec: SandboxSpec): string[] {
  const args = [
    "--unshare-all", // user, ipc, pid, net, uts, cgroup
    "--unshare-user",
    "--disable-userns",
    "--die-with-parent",
    "--new-session",
    "--hostname",
    "texpool",
    ...texBinds(RO_BINDS),
    ...rootLinkArgs(),
  ];
  args.push("--proc", "/proc", "--dev", "/dev", "--perms", "1777", "--size", String(TMP_BYTES), "--tmpfs", "/tmp");
  if (spec.luaSandbox) args.push("--ro-bind", spec.luaSandbox, SANDBOX_LUA);
  if (spec.fmtFile) args.push("--ro-bind", spec.fmtFile, SANDBOX_FMT);
  if (spec.fontCache) args.push("--ro-bind-try", spec.fontCache, SANDBOX_FONT_CACHE);
  if (spec.driverDir) args.push("--ro-bind", spec.driverDir, SANDBOX_DRIVER);
  if (spec.binDir) args.push("--ro-bind", spec.binDir, SANDBOX_BIN);
  args.push("--bind", spec.hostDir, SANDBOX_JOB_DIR, "--chdir", spec.chdir ?? SANDBOX_JOB_DIR, "--remount-ro", "/", "--clearenv");
  for (const [k, v] of Object.entries(spec.env)) args.push("--setenv", k, v);
  return args;
}

/** The Lua sandbox as shipped, beside the server's code. */
export const LUA_SANDBOX_SOURCE = fileURLToPath(new URL("./lua/sandbox.lua", import.meta.url));

/** The copy of the Lua sandbox that engines read (see stageRuntimeFiles). */
export function runtimeLuaPath(jobRoot: string): string {
  return path.join(jobRoot, ".runtime", "sandbox.lua");
}

/** The folder of program guards engines find first in PATH (see stageRuntimeFiles). */
export function runtimeBinPath(jobRoot: string): string {
  return path.join(jobRoot, ".runtime", "bin");
}

/**
 * kpsewhich as documents run it (restricted shell escape: `\input|"kpsewhich ..."`). Its -mktex
 * option would run mktextfm/mktexpk, i.e. METAFONT, which jobs never run (MKTEX*=0 in the
 * environment, which the command line overrides); kpsewhich also takes abbreviations (-mk=tfm).
 */
export const KPSEWHICH_GUARD = `#!/bin/sh
for a in "$@"; do
  case "$a" in -mk*|--mk*) echo "kpsewhich: -mktex is not allowed here" >&2; exit 1 ;; esac
done
exec /usr/bin/kpsewhich "$@"
`;

/** Paths the engine uid must reach, as TeX sees them when it reads a job's paths unsandboxed. */
const TEX_SAFE_PATH = /^[A-Za-z0-9_./-]+$/;

export class RuntimeFilesUnreachable extends Error {}

interface StageConfig {
  jobRoot: string;
  uids: UidRange | undefined;
  sandbox: boolean;
}

/**
 * Copies what engines read of the server's own files (the Lua sandbox) into `<jobRoot>/.runtime`
 * (0755/0644, owned by the server), so engines running as other uids (each job's own, when the server
 * runs as root) read it wherever the checkout lives: a clone inside a 0700 directory (a root's home,
 * `mktemp -d`) is out of their reach. Then checks, as the engine uid, that the job root and the copy
 * are reachable, and refuses (naming the path and the fix) when not, instead of engines that never
 * start. Call after the job root exists.
 */
export async function stageRuntimeFiles(cfg: StageConfig, source = LUA_SANDBOX_SOURCE): Promise<string> {
  const target = runtimeLuaPath(cfg.jobRoot);
  if (!cfg.sandbox && !TEX_SAFE_PATH.test(target)) {
    throw new RuntimeFilesUnreachable(`JOB_ROOT ${cfg.jobRoot} is unsuitable for TeX (only letters, digits, "_", ".", "/", "-"): set JOB_ROOT to a path such as /tmp/texcompile.`);
  }
  await fs.mkdir(path.dirname(target), { recursive: true, mode: 0o755 });
  await fs.chmod(path.dirname(target), 0o755);
  await fs.copyFile(source, target);
  await fs.chmod(target, 0o644);
  const bin = runtimeBinPath(cfg.jobRoot);
  await fs.mkdir(bin, { recursive: true, mode: 0o755 });
  await fs.chmod(bin, 0o755);
  await fs.writeFile(path.join(bin, "kpsewhich"), KPSEWHICH_GUARD, { mode: 0o755 });
  await fs.chmod(path.join(bin, "kpsewhich"), 0o755);
  if (!cfg.uids) return target; // engines run as the server's own uid, which made these
  // every job uid has the same rights here (none of its own): one stands for all
  const uid = cfg.uids.base;
  const gid = uid;
  const problem = await new Promise<string | null>((resolve) => {
    const script = 'if ! test -x "$1"; then echo "$1"; elif ! test -r "$2"; then echo "$2"; fi';
    execFile("/bin/sh", ["-c", script, "sh", cfg.jobRoot, target], { uid, gid, timeout: 2000, env: { PATH: "/usr/bin:/bin" } }, (err, stdout) => {
      if (err) resolve(`(the check could not run as uid ${uid}: ${err.message})`);
      else resolve(stdout.trim() || null);
    });
  });
  if (problem === null) return target;
  throw new RuntimeFilesUnreachable(
    `Engines run as job uids (${uid} and up, ENGINE_UID_BASE), which cannot reach ${problem}: a directory above it is not searchable for that uid ` +
      `(e.g. a 0700 home or mktemp -d directory). Fix: set JOB_ROOT to a directory every user can traverse ` +
      `(e.g. JOB_ROOT=/tmp/texcompile; the default is $TMPDIR/texcompile-<pid>), or chmod o+x the directories above it.`,
  );
}
