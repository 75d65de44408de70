// Which TeX installation jobs use: the host's own (/usr, as in the image) or a Debian root
// filesystem built beside it (scripts/ensure-tex.ts: TeX Live 2024 from trixie on a dev machine
// whose own Debian ships an older one). With a root filesystem, the sandbox binds its /usr,
// /etc/texmf, /var/lib/texmf, fonts... at their usual places (sandbox.ts), and what the server
// runs or reads of the installation itself (versions, kpathsea, ls-R files, caches) goes
// through the same root, so every identity (preamble keys, /environment) is the rootfs's.
import { existsSync, lstatSync, readlinkSync } from "node:fs";
import path from "node:path";

/** Where `npm run tex:ensure` builds the root filesystem; used when complete (TEX_ROOT_READY). */
export const DEFAULT_TEX_ROOT = "/opt/texpool/trixie";
/** Host-side wrappers in the root (scripts/tex-rootfs.ts): each runs the root's program of that name; tests put it first in PATH. */
export const TEX_ROOT_BIN = ".texpool-bin";
/** Written last by scripts/ensure-tex.ts: a root without it is half built and never used. */
export const TEX_ROOT_READY = ".texpool-ready";

/**
 * TEX_ROOT: "host" (or "/") uses the host's TeX; a path uses that root filesystem (it must be
 * complete); unset uses DEFAULT_TEX_ROOT when it is complete, else the host's.
 */
export function resolveTexRoot(env: Record<string, string | undefined>): string | undefined {
  const raw = (env.TEX_ROOT ?? "").trim();
  if (raw === "host" || raw === "/") return undefined;
  if (raw) {
    const root = path.resolve(raw);
    if (!existsSync(path.join(root, TEX_ROOT_READY))) throw new Error(`env TEX_ROOT=${raw}: not a complete TeX root filesystem (no ${TEX_ROOT_READY}; run npm run tex:ensure)`);
    return root;
  }
  return existsSync(path.join(DEFAULT_TEX_ROOT, TEX_ROOT_READY)) ? DEFAULT_TEX_ROOT : undefined;
}

let active: string | undefined;

/** Set once at server start (config.ts parses TEX_ROOT): what the helpers below use. */
export function useTexRoot(root: string | undefined): void {
  active = root;
}

export function currentTexRoot(): string | undefined {
  return active;
}

/** Links followed at most in one path, as the kernel's limit. */
const MAX_LINKS = 40;

/**
 * Where a path of the installation (as TeX sees it, e.g. /var/lib/texmf/...) is on the host. In a
 * root filesystem its links are followed inside the root: Debian's point at absolute paths
 * (texmf-dist/ls-R -> /var/lib/texmf/ls-R-TEXLIVEDIST), which on the host would be the host's own
 * files, or nothing.
 */
export function texHostPath(p: string, root = active): string {
  if (!root) return p;
  let rest = path.posix.normalize(`/${p}`).split("/").filter(Boolean);
  const done: string[] = [];
  for (let links = 0; rest.length > 0; ) {
    const name = rest.shift()!;
    if (name === "..") {
      done.pop();
      continue;
    }
    const here = path.join(root, ...done, name);
    let target: string | undefined;
    try {
      if (links < MAX_LINKS && lstatSync(here).isSymbolicLink()) target = readlinkSync(here);
    } catch {
      /* missing: the rest is joined as it is */
    }
    if (target === undefined) {
      done.push(name);
      continue;
    }
    links++;
    const parts = target.split("/").filter((x) => x && x !== ".");
    if (target.startsWith("/")) done.length = 0;
    rest = [...parts, ...rest];
  }
  return path.join(root, ...done);
}

/**
 * Read-only binds of the installation for a bwrap sandbox: /usr (required) and the optional
 * configuration, format and cache folders, from the root filesystem when there is one.
 */
export function texBinds(optional: readonly string[], root = active): string[] {
  const args = ["--ro-bind", texHostPath("/usr", root), "/usr"];
  for (const p of optional) args.push("--ro-bind-try", texHostPath(p, root), p);
  return args;
}

/**
 * A trusted tool of the installation run by the server itself (kpsewhich, `pdftex --version`,
 * fc-list): as is on the host's TeX; in the root filesystem otherwise (the whole root read-only,
 * nothing of the host but a fresh /dev, /proc and /tmp; no network).
 */
export function texCommand(cmd: string, args: readonly string[], root = active): [string, string[]] {
  if (!root) return [cmd, [...args]];
  return ["/usr/bin/bwrap", ["--unshare-net", "--die-with-parent", "--ro-bind", root, "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--chdir", "/", "--", cmd, ...args]];
}
