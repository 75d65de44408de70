// Makes sure the TeX Live of the image (Debian trixie's, container/tex-packages.txt) is there on a
// dev/CI machine.   node scripts/ensure-tex.ts      (npm run tex:ensure)
// Default: a trixie root filesystem in /opt/texpool/trixie (scripts/tex-rootfs.ts; root on a
// Debian/Ubuntu host; built once, checked in a second after), which the compile server's sandbox
// binds (container/src/texroot.ts). TEX_ROOT=host: the host's own Debian TeX Live instead
// (apt-get install of the same list, then the Dockerfile's warm-up), as before.
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { buildRootfs, rootfsReady, SHIM_DIR } from "./tex-rootfs.ts";
import { DEFAULT_TEX_ROOT } from "../container/src/texroot.ts";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const LIST = path.join(ROOT, "container", "tex-packages.txt");
const packages = readFileSync(LIST, "utf8")
  .split("\n")
  .map((l) => l.trim())
  .filter((l) => l && !l.startsWith("#"));
const installCmd = `apt-get update && apt-get install -y --no-install-recommends ${packages.join(" ")}`;

function ok(cmd: string, args: string[]): boolean {
  const r = spawnSync(cmd, args, { stdio: "ignore" });
  return r.status === 0;
}

function missingPackages(): string[] {
  const r = spawnSync("dpkg-query", ["-W", "-f=${Package} ${Status}\n", ...packages], { encoding: "utf8" });
  const installed = new Set(
    (r.stdout ?? "")
      .split("\n")
      .filter((l) => l.endsWith("install ok installed"))
      .map((l) => l.split(" ")[0]),
  );
  return packages.filter((p) => !installed.has(p));
}

/** The three engines, on the host's PATH (what the compile server's safe mode runs). */
function hostEnginesRun(): boolean {
  return ["pdflatex", "xelatex", "lualatex"].every((c) => ok(c, ["--version"]));
}

function enginesWork(): boolean {
  return (
    hostEnginesRun() &&
    ["bibtex", "biber", "kpsewhich"].every((c) => ok(c, ["--version"])) &&
    ok("pdftotext", ["-v"]) &&
    ok("kpsewhich", ["tikz.sty"]) &&
    ok("/usr/bin/bwrap", ["--version"]) // the compile server runs every engine in bubblewrap
  );
}

function isDebian(): boolean {
  if (!existsSync("/etc/os-release")) return false;
  const os = readFileSync("/etc/os-release", "utf8");
  return /^(ID|ID_LIKE)=.*(debian|ubuntu)/m.test(os) && existsSync("/usr/bin/apt-get");
}

const isRoot = process.getuid?.() === 0;
if (!["host", "/"].includes((process.env.TEX_ROOT ?? "").trim())) {
  ensureRootfs();
  // Where bubblewrap cannot run, a compile server running as root falls back to its safe mode, which
  // runs the host's own engines (no sandbox binds the rootfs there): a root Debian host gets them too.
  if (!isRoot || !isDebian() || hostEnginesRun()) process.exit(0);
  console.log("TeX: the host's own TeX Live as well, for the compile server's safe mode (its fallback where bubblewrap cannot run)");
}
const hasDpkg = ok("dpkg-query", ["--version"]);
const missing = hasDpkg ? missingPackages() : [];

if (enginesWork() && missing.length === 0) {
  warmCaches();
  console.log("TeX: installed (" + packages.length + " packages from container/tex-packages.txt)");
  process.exit(0);
}

if (!isRoot || !isDebian()) {
  console.error(`TeX Live is missing${missing.length ? ` (${missing.join(", ")})` : ""}. Install it with:\n\n  sudo sh -c '${installCmd}'\n`);
  process.exit(1);
}

console.log(`Installing TeX Live: ${missing.join(" ") || packages.join(" ")}`);
const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
for (const args of [["update"], ["install", "-y", "--no-install-recommends", ...packages]]) {
  const r = spawnSync("apt-get", args, { stdio: "inherit", env });
  if (r.status !== 0) {
    console.error(`apt-get ${args[0]} failed. Run:\n\n  ${installCmd}\n`);
    process.exit(1);
  }
}
if (!enginesWork()) {
  console.error("TeX engines still not working after the install.");
  process.exit(1);
}
// new font packages: the font names database must list them, or each lualatex job rescans
spawnSync("luaotfload-tool", ["--update"], { stdio: "ignore", env: { ...process.env, TEXMFVAR: "/var/lib/texmf" } });
warmCaches();
console.log("TeX: installed");

/**
 * Same as the Dockerfile: build the luaotfload caches of the shipped fonts into
 * TEXMFSYSVAR once (about a minute for the CJK fonts), so lualatex jobs (whose own
 * cache dir starts empty) never regenerate them. Needs root; skipped otherwise.
 */
function warmCaches(): void {
  // metrics of the T2A Cyrillic fonts (pdflatex with \usepackage[T2A]{fontenc}): made once with METAFONT
  const t2a = ok("kpsewhich", ["-must-exist", "larm1000.tfm"]);
  if (!isRoot) {
    if (!t2a) console.error("TeX: the T2A Cyrillic font metrics are missing (pdflatex documents in T2A fail). Make them with:\n\n  sudo sh container/lh-tfm.sh\n");
    return;
  }
  if (!t2a) {
    console.log("TeX: making the T2A Cyrillic font metrics (once, a minute or two)...");
    const r = spawnSync("sh", [path.join(ROOT, "container", "lh-tfm.sh")], { stdio: "inherit" });
    if (r.status !== 0) console.error("TeX: container/lh-tfm.sh failed (pdflatex documents in T2A encoding will fail)");
  }
  // TeX Live's OpenType fonts visible to fontconfig (xelatex looks fonts up by name)
  const fcConf = path.join(ROOT, "container", "fontconfig", "09-texlive-fonts.conf");
  const fcTarget = "/etc/fonts/conf.d/09-texlive-fonts.conf";
  if (!existsSync(fcTarget) || readFileSync(fcTarget, "utf8") !== readFileSync(fcConf, "utf8")) {
    spawnSync("cp", [fcConf, fcTarget]);
    spawnSync("fc-cache", ["-f"], { stdio: "ignore" });
  }
  // fontspec families for font names no Linux has ("Times New Roman" in Liberation Serif, ...)
  const specDir = path.join(ROOT, "container", "texmf", "tex", "latex", "texpool-fonts");
  const specTarget = "/usr/local/share/texmf/tex/latex/texpool-fonts";
  const stale = readdirSync(specDir).some((f) => !existsSync(path.join(specTarget, f)) || readFileSync(path.join(specTarget, f), "utf8") !== readFileSync(path.join(specDir, f), "utf8"));
  if (stale) {
    spawnSync("mkdir", ["-p", specTarget]);
    spawnSync("sh", ["-c", 'cp "$1"/*.fontspec "$2"/ && mktexlsr /usr/local/share/texmf', "sh", specDir, specTarget], { stdio: "ignore" });
  }
  // fonts installed after the luaotfload names database was built (the substitutes) are not in it
  const sysvar = { ...process.env, TEXMFVAR: "/var/lib/texmf" };
  const find = spawnSync("luaotfload-tool", ["--find=Liberation Serif"], { encoding: "utf8", env: sysvar });
  if (!`${find.stdout}${find.stderr}`.includes("found!")) spawnSync("luaotfload-tool", ["--update"], { stdio: "ignore", env: sysvar });
  const otl = "/var/lib/texmf/luatex-cache/generic/fonts/otl";
  const cached = existsSync(otl) ? readdirSync(otl) : [];
  // one font of each group warmup.tex loads
  const done = ["notoserifcjk", "libertinusserif-regular", "fontawesome5free-solid"].every((p) => cached.some((f) => f.startsWith(p)));
  if (done) return;
  console.log("TeX: building luaotfload font caches (once, about a minute)...");
  const dir = spawnSync("mktemp", ["-d"], { encoding: "utf8" }).stdout.trim();
  spawnSync("cp", [path.join(ROOT, "container", "warmup.tex"), dir]);
  spawnSync("luaotfload-tool", ["--update"], { stdio: "ignore" });
  const r = spawnSync("lualatex", ["-interaction=batchmode", "warmup.tex"], { cwd: dir, stdio: "ignore", env: { ...process.env, TEXMFVAR: "/var/lib/texmf" } });
  spawnSync("rm", ["-rf", dir]);
  if (r.status !== 0) console.error("TeX: font cache warm-up failed (lualatex jobs with CJK fonts will be slow)");
}

/** The trixie root filesystem: built (or found complete), its engines checked; exits when it cannot be. */
function ensureRootfs(): void {
  // TEX_ROOT=/path builds (or checks) that root filesystem instead of the default one
  const target = (process.env.TEX_ROOT ?? "").trim() ? path.resolve(process.env.TEX_ROOT!.trim()) : DEFAULT_TEX_ROOT;
  if (!rootfsReady(ROOT, target)) {
    if (!isRoot || !isDebian()) {
      console.error(`The TeX root filesystem (${target}) is missing or stale. Build it as root on Debian/Ubuntu:\n\n  sudo npm run tex:ensure\n\n(or TEX_ROOT=host npm run tex:ensure for the host's own TeX Live)`);
      process.exit(1);
    }
    // the host needs only bubblewrap (and prlimit, util-linux): every TeX program is the rootfs's
    if (!ok("/usr/bin/bwrap", ["--version"])) spawnSync("apt-get", ["install", "-y", "--no-install-recommends", "bubblewrap"], { stdio: "inherit", env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" } });
  }
  let r;
  try {
    r = buildRootfs(ROOT, target);
  } catch (e) {
    console.error(`TeX rootfs: ${(e as Error).message}`);
    process.exit(1);
  }
  const shim = path.join(r.root, SHIM_DIR);
  const works = ["pdflatex", "xelatex", "lualatex", "bibtex", "biber"].every((c) => ok(path.join(shim, c), ["--version"])) && ok(path.join(shim, "kpsewhich"), ["-must-exist", "pstricks.sty"]);
  if (!works) {
    console.error(`TeX rootfs ${r.root}: its engines do not run (rebuild: rm -rf ${r.root} && npm run tex:ensure)`);
    process.exit(1);
  }
  console.log(`TeX: ${r.built ? "built" : "ready"} ${r.root} (Debian trixie, TeX Live 2024) in ${r.seconds} s; its programs on the host: PATH=${shim}:$PATH`);
}
