// Builds the TeX root filesystem dev/CI jobs run in (container/src/texroot.ts): Debian trixie
// (TeX Live 2024, as the image) with container/tex-packages.txt, made with mmdebstrap from the
// host's own Debian mirror, then the same fonts and caches as container/Dockerfile. The host's
// packages and apt sources are never touched. Used by scripts/ensure-tex.ts (as root).
import { spawnSync, type SpawnSyncOptions } from "node:child_process";
import { createHash } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { DEFAULT_TEX_ROOT, TEX_ROOT_BIN, TEX_ROOT_READY } from "../container/src/texroot.ts";

/** The suite by codename (not "stable"), so the next Debian release never arrives unasked. */
export const SUITE = "trixie";
const MIRROR = "http://deb.debian.org/debian";
/** Host-side wrappers (PATH for tests and shells): each runs the rootfs's program of that name. */
export const SHIM_DIR = TEX_ROOT_BIN;
/** Programs of these packages get a wrapper (TeX, its tools, fonts, PDF tools the tests read PDFs with). */
const SHIM_PACKAGES = /^(texlive|tex4ht|luatex|biber|xindy|poppler-utils|fontconfig|ghostscript|gnuplot|python3-pygments|lcdf-typetools|t1utils|psutils|dvisvgm|ps2eps|dvipng|context|lacheck|chktex)/;

export interface RootfsResult {
  root: string;
  built: boolean;
  seconds: number;
}

function must(cmd: string, args: string[], opts: SpawnSyncOptions = {}): void {
  const r = spawnSync(cmd, args, { stdio: "inherit", ...opts });
  if (r.status !== 0) throw new Error(`${cmd} ${args.slice(0, 3).join(" ")}... failed (${r.status ?? r.error?.message})`);
}

/** What the rootfs is built from: a changed package list, suite or warm-up makes it stale. */
export function recipeHash(repo: string): string {
  const h = createHash("sha256").update(SUITE).update(packageList(repo).join(","));
  for (const f of ["container/warmup.tex", "container/lh-tfm.sh", "container/fontconfig/09-texlive-fonts.conf", "container/fontconfig/10-metric-aliases.conf"]) h.update(readFileSync(path.join(repo, f)));
  const spec = path.join(repo, "container", "texmf", "tex", "latex", "texpool-fonts");
  for (const f of readdirSync(spec).sort()) h.update(f).update(readFileSync(path.join(spec, f)));
  const fallback = path.join(repo, "container", "texmf-fallback");
  for (const f of readdirSync(fallback, { recursive: true, encoding: "utf8" }).sort()) {
    const file = path.join(fallback, f);
    if (!statSync(file).isDirectory()) h.update(f).update(readFileSync(file));
  }
  return h.digest("hex");
}

function packageList(repo: string): string[] {
  return readFileSync(path.join(repo, "container", "tex-packages.txt"), "utf8")
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith("#"));
}

export function rootfsReady(repo: string, root = DEFAULT_TEX_ROOT): boolean {
  const marker = path.join(root, TEX_ROOT_READY);
  return existsSync(marker) && readFileSync(marker, "utf8").includes(`recipe ${recipeHash(repo)}`);
}

/** In the rootfs as root (bwrap, no chroot mounts to clean up), with a fresh /dev, /proc and /tmp. */
function inRoot(root: string, script: string, extraBinds: string[] = []): void {
  must("/usr/bin/bwrap", ["--bind", root, "/", ...extraBinds, "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--chdir", "/", "--setenv", "PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "--setenv", "HOME", "/root", "--", "/bin/sh", "-euc", script]);
}

/**
 * Installs what the list has and the root lacks: with the root's own apt (variant apt); in a root
 * without apt, the missing packages' .debs fetched by the host's apt-get with a private trixie
 * configuration (the host's sources untouched), then dpkg -i in the root (their dependencies must
 * be there: dpkg says which are not).
 */
function addPackages(stage: string, packages: string[]): void {
  const known = spawnSync("dpkg-query", [`--admindir=${stage}/var/lib/dpkg`, "-W", "-f=${Package} ${Status}\n", ...packages], { encoding: "utf8" }).stdout;
  const have = new Set(known.split("\n").filter((l) => l.endsWith("install ok installed")).map((l) => l.split(" ")[0]));
  const missing = packages.filter((p) => !have.has(p));
  if (missing.length === 0) return;
  const net = ["--ro-bind", "/etc/resolv.conf", "/etc/resolv.conf"];
  if (existsSync(path.join(stage, "usr/bin/apt-get"))) {
    inRoot(stage, `apt-get update -qq\nDEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends ${missing.join(" ")}\napt-get clean`, net);
    return;
  }
  const tmp = path.join(stage, "root", "texpool-debs");
  mkdirSync(path.join(tmp, "state", "lists", "partial"), { recursive: true });
  mkdirSync(path.join(tmp, "cache", "archives", "partial"), { recursive: true });
  writeFileSync(path.join(tmp, "sources.list"), `deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] ${MIRROR} ${SUITE} main\n`);
  const o = ["-o", `Dir::Etc::SourceList=${tmp}/sources.list`, "-o", "Dir::Etc::SourceParts=-", "-o", `Dir::State=${tmp}/state`, "-o", `Dir::State::Status=${stage}/var/lib/dpkg/status`, "-o", `Dir::Cache=${tmp}/cache`, "-o", "APT::Sandbox::User=root"];
  must("apt-get", [...o, "update", "-qq"]);
  must("apt-get", [...o, "download", ...missing], { cwd: tmp });
  inRoot(stage, "dpkg -i /root/texpool-debs/*.deb && rm -rf /root/texpool-debs");
}

export function buildRootfs(repo: string, root = DEFAULT_TEX_ROOT): RootfsResult {
  const started = Date.now();
  const seconds = () => Math.round((Date.now() - started) / 100) / 10;
  if (rootfsReady(repo, root)) return { root, built: false, seconds: seconds() };
  if (!existsSync("/usr/bin/mmdebstrap")) must("apt-get", ["install", "-y", "--no-install-recommends", "mmdebstrap"], { env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" } });
  const packages = packageList(repo);
  const stage = `${root}.new`;
  const listHash = createHash("sha256").update(SUITE).update(packages.join(",")).digest("hex");
  const bootstrapped = path.join(stage, ".texpool-bootstrapped");
  // an interrupted build resumes after mmdebstrap (the warm-up steps below can run twice)
  // a stale complete root (its list changed) is updated in place rather than made again
  if (!existsSync(bootstrapped) && existsSync(path.join(root, ".texpool-bootstrapped"))) {
    rmSync(stage, { recursive: true, force: true });
    rmSync(path.join(root, TEX_ROOT_READY), { force: true });
    renameSync(root, stage);
  }
  const base = existsSync(bootstrapped);
  const resume = base && readFileSync(bootstrapped, "utf8").trim() === listHash;
  if (!base) rmSync(stage, { recursive: true, force: true });
  mkdirSync(path.dirname(root), { recursive: true });
  if (base && !resume) {
    console.log(`TeX rootfs: the package list changed: apt-get install in ${stage}...`);
    addPackages(stage, packages);
    writeFileSync(bootstrapped, `${listHash}\n`);
  }
  if (!base) console.log(`TeX rootfs: mmdebstrap ${SUITE} with ${packages.length} packages into ${stage} (several minutes)...`);
  // no documentation, manuals or info pages: nothing a compile reads, a few hundred MB
  const noDocs = ["path-exclude=/usr/share/doc/*", "path-include=/usr/share/doc/*/copyright", "path-exclude=/usr/share/man/*", "path-exclude=/usr/share/info/*", "path-exclude=/usr/share/locale/*"].flatMap((o) => ["--dpkgopt", o]);
  if (!base) {
    // a fresh root nobody uses until it is complete: dpkg need not fsync each file (an interrupted
    // build starts over), and apt fetches no translations
    const fast = ["--dpkgopt=force-unsafe-io", '--aptopt=Acquire::Languages "none"'];
    must("mmdebstrap", ["--mode=root", "--variant=apt", "--skip=cleanup/apt/lists", `--include=${[...packages, "fontconfig", "perl"].join(",")}`, ...noDocs, ...fast, SUITE, stage, MIRROR]);
    writeFileSync(bootstrapped, `${listHash}\n`);
  }

  // which trixie point release this is (the lists are removed below)
  const release = spawnSync("sh", ["-c", `cat ${stage}/var/lib/apt/lists/*_dists_${SUITE}_InRelease 2>/dev/null | grep -E '^(Version|Date):' | head -2`], { encoding: "utf8" }).stdout;
  // the Dockerfile's fonts and caches, same order (the formats: already built by the packages' triggers)
  must("cp", [path.join(repo, "container", "fontconfig", "09-texlive-fonts.conf"), path.join(repo, "container", "fontconfig", "10-metric-aliases.conf"), path.join(stage, "etc/fonts/conf.d/")]);
  must("cp", ["-rT", path.join(repo, "container", "texmf"), path.join(stage, "usr/local/share/texmf")]);
  must("mkdir", ["-p", path.join(stage, "tmp/warmup")]);
  const work = path.join(stage, "root", "texpool-warmup");
  mkdirSync(work, { recursive: true });
  must("cp", [path.join(repo, "container", "warmup.tex"), path.join(repo, "container", "lh-tfm.sh"), work]);
  must("cp", ["-r", path.join(repo, "container", "texmf-fallback"), work]);
  console.log("TeX rootfs: fonts, formats and caches (a few minutes)...");
  inRoot(
    stage,
    [
      "fc-cache -f",
      // packages Debian leaves out (fontawesome6), only where TeX Live has none of its own
      "sh /root/texpool-warmup/texmf-fallback/install.sh /root/texpool-warmup/texmf-fallback /usr/local/share/texmf",
      "mktexlsr /usr/local/share/texmf",
      "luaotfload-tool --update --force",
      "cd /root/texpool-warmup",
      "TEXMFVAR=/var/lib/texmf lualatex -interaction=batchmode warmup.tex",
      "xelatex -interaction=batchmode warmup.tex",
      "sh ./lh-tfm.sh",
      "cd / && rm -rf /root/texpool-warmup /root/.texlive* /var/cache/apt/archives/*.deb /var/lib/apt/lists/*",
      "chmod -R a+rX /var/lib/texmf",
    ].join("\n"),
  );
  writeShims(stage, root);
  const texlive = spawnSync("dpkg-query", [`--admindir=${stage}/var/lib/dpkg`, "-W", "-f=${Version}", "texlive-base"], { encoding: "utf8" }).stdout;
  writeFileSync(path.join(stage, TEX_ROOT_READY), `suite ${SUITE}\ntexlive-base ${texlive}\n${release}built ${new Date().toISOString()}\nrecipe ${recipeHash(repo)}\n`);
  rmSync(root, { recursive: true, force: true });
  renameSync(stage, root);
  return { root, built: true, seconds: seconds() };
}

/**
 * One wrapper per program of the TeX packages: it runs the rootfs's program with the rootfs as /
 * (read-only), the caller's folder and /tmp read-write, so a test or a shell gets the same TeX the
 * sandbox shows jobs. `final` is where the rootfs ends up (the wrappers are written before the move).
 */
function writeShims(stage: string, final: string): void {
  const dpkg = `${stage}/var/lib/dpkg`;
  const pkgs = spawnSync("dpkg-query", [`--admindir=${dpkg}`, "-W", "-f=${Package}\n"], { encoding: "utf8" }).stdout.split("\n").filter((p) => SHIM_PACKAGES.test(p));
  const files = spawnSync("dpkg-query", [`--admindir=${dpkg}`, "-L", ...pkgs], { encoding: "utf8" }).stdout.split("\n");
  const progs = [...new Set(files.filter((f) => /^\/usr\/bin\/[A-Za-z0-9._+-]+$/.test(f)).map((f) => path.basename(f)))];
  // Debian's alternatives (bibtex, ...) and links made by maintainer scripts are not in dpkg's lists
  for (const f of readdirSync(path.join(stage, "usr/bin"))) if (/^(bibtex|pdf|xe|lua|kpse|mktex|fmtutil|updmap|tex|latex|etex|dvi|mf|mpost|makeindex|xindy|biber)/.test(f)) progs.push(f);
  const dir = path.join(stage, SHIM_DIR);
  mkdirSync(dir, { recursive: true });
  for (const p of new Set(progs)) {
    writeFileSync(path.join(dir, p), `#!/bin/sh\n# ${p} of the TeX root filesystem (scripts/tex-rootfs.ts)\nexec ${path.join(final, SHIM_DIR, ".run")} /usr/bin/${p} "$@"\n`);
    chmodSync(path.join(dir, p), 0o755);
  }
  // the root's own folders on bwrap's empty root, so the caller's folder and home can be bound wherever they are
  const run = `#!/bin/sh
here="$PWD"; home="\${HOME:-/tmp}"
r=${final}
exec /usr/bin/bwrap --ro-bind $r/usr /usr --ro-bind $r/etc /etc --ro-bind $r/var /var --symlink usr/bin /bin --symlink usr/sbin /sbin --symlink usr/lib /lib --symlink usr/lib64 /lib64 \\
  --dev /dev --proc /proc --bind /tmp /tmp --bind-try "$home" "$home" --bind-try "$here" "$here" --chdir "$here" -- "$@"
`;
  writeFileSync(path.join(dir, ".run"), run);
  chmodSync(path.join(dir, ".run"), 0o755);
  console.log(`TeX rootfs: ${progs.length} program wrappers in ${path.join(final, SHIM_DIR)}`);
}
