// GET /environment: what this server's TeX installation is — TeX Live's version, the engines'
// versions, the LaTeX packages and classes installed (with the date and version each declares)
// and the font families fontconfig knows. Read from the installation itself (kpathsea's ls-R
// databases, the files' own \ProvidesPackage lines, fc-list), once, the first time it is asked
// for; the installation does not change while the server runs.
import { execFile } from "node:child_process";
import { promises as fs } from "node:fs";
import path from "node:path";
import type { Engine } from "./config.ts";
import { texCommand, texHostPath } from "./texroot.ts";

export interface PackageInfo {
  name: string;
  kind: "package" | "class";
  /** The date of its \ProvidesPackage/\ProvidesClass line (yyyy/mm/dd), when it has one. */
  date?: string;
  /** Its version ("v1.2", "1.2a"), when the line has one. */
  version?: string;
}

export interface Environment {
  texlive: { version: string | null; banner: string | null };
  engines: Array<{ name: Engine; version: string | null }>;
  packages: PackageInfo[];
  fonts: string[];
  /** How long reading the installation took, once. */
  generatedMs: number;
}

/** Bounds of what is read: the installation is trusted, but a broken one must not stall the server. */
const HEAD_BYTES = 4096;
const MAX_PACKAGES = 20_000;
const MAX_FONTS = 5_000;
const READ_CONCURRENCY = 16;
const RUN_TIMEOUT_MS = 20_000;

/** A tool of the installation (texroot.ts: the TeX root filesystem's when there is one). */
function run(cmd: string, args: string[]): Promise<string> {
  const [file, argv] = texCommand(cmd, args);
  return new Promise((resolve) => {
    execFile(file, argv, { timeout: RUN_TIMEOUT_MS, maxBuffer: 16 * 1024 * 1024, env: { PATH: "/usr/local/bin:/usr/bin:/bin", LANG: "C.UTF-8" } }, (err, stdout) => resolve(err ? "" : stdout));
  });
}

/** `.sty` and `.cls` files listed by an ls-R database (`./dir:` lines, then the names in it), by name; the first of a name wins, as in kpathsea. */
export function parseLsR(text: string, root: string, into: Map<string, string>): void {
  let dir = root;
  for (const line of text.split("\n")) {
    if (line.endsWith(":") && (line.startsWith("./") || line.startsWith("/"))) {
      dir = path.join(root, line.slice(0, -1));
      continue;
    }
    if (!(line.endsWith(".sty") || line.endsWith(".cls")) || line.includes("/")) continue;
    if (!into.has(line) && into.size < MAX_PACKAGES) into.set(line, path.join(dir, line));
  }
}

/** The date and version of a package's `\ProvidesPackage{name}[2024/01/02 v1.2 ...]` (the bracket may follow on the next lines). */
export function providedInfo(head: string, name: string, kind: PackageInfo["kind"]): { date?: string; version?: string } {
  const cmd = kind === "class" ? "\\ProvidesClass" : "\\ProvidesPackage";
  const at = head.indexOf(`${cmd}{${name}}`);
  if (at < 0) return {};
  const open = head.indexOf("[", at);
  const close = open < 0 ? -1 : head.indexOf("]", open);
  // the bracket belongs to this line when only spaces, line ends and comments lie between
  if (open < 0 || close < 0 || close - open > 300 || !/^(?:\s|%[^\n]*\n)*$/.test(head.slice(at + cmd.length + name.length + 2, open))) return {};
  const words = head.slice(open + 1, close).split(/\s+/).filter(Boolean);
  const out: { date?: string; version?: string } = {};
  const date = words.find((w) => /^\d{4}[/-]\d{2}[/-]\d{2}$/.test(w));
  if (date) out.date = date;
  const version = words.find((w) => /^v?\d+(?:\.\w+)*[a-z]?$/.test(w) && w !== date);
  if (version) out.version = version;
  return out;
}

async function readHead(file: string): Promise<string> {
  const fh = await fs.open(file, "r").catch(() => undefined);
  if (!fh) return "";
  try {
    const buf = Buffer.alloc(HEAD_BYTES);
    const { bytesRead } = await fh.read(buf, 0, HEAD_BYTES, 0);
    return buf.subarray(0, bytesRead).toString("latin1");
  } finally {
    await fh.close();
  }
}

async function packages(): Promise<PackageInfo[]> {
  const roots = (await run("kpsewhich", ["-expand-path", "$TEXMFDBS"])).trim().split(":").filter(Boolean);
  const files = new Map<string, string>();
  for (const root of roots) {
    const db = await fs.readFile(texHostPath(path.join(root, "ls-R")), "utf8").catch(() => "");
    parseLsR(db, root, files);
  }
  const list = [...files.entries()];
  const out: PackageInfo[] = new Array(list.length);
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < list.length; i = next++) {
      const [file, full] = list[i]!;
      const kind = file.endsWith(".cls") ? "class" : "package";
      const name = file.slice(0, -4);
      out[i] = { name, kind, ...providedInfo(await readHead(texHostPath(full)), name, kind) };
    }
  };
  await Promise.all(Array.from({ length: READ_CONCURRENCY }, worker));
  return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : a.kind < b.kind ? 1 : -1));
}

async function fonts(): Promise<string[]> {
  const text = await run("fc-list", ["--format", "%{family[0]}\n"]);
  return [...new Set(text.split("\n").map((s) => s.trim()).filter(Boolean))].sort().slice(0, MAX_FONTS);
}

const firstLine = (s: string) => s.split("\n")[0]?.trim() || null;

async function read(engines: readonly Engine[]): Promise<Environment> {
  const started = Date.now();
  const [pdftex, pkgs, fams, ...versions] = await Promise.all([run("pdftex", ["--version"]), packages(), fonts(), ...engines.map((e) => run(e, ["--version"]))]);
  const banner = firstLine(pdftex);
  const release = await run("kpsewhich", ["-var-value", "TEXMFROOT"]).then((root) => fs.readFile(texHostPath(path.join(root.trim(), "release-texlive.txt")), "utf8").catch(() => ""));
  // Debian's release of it first: trixie's is TeX Live 2024 (its engines; package 2024.20250309),
  // whose tree snapshot's release file and banner already say 2025
  const debian = /^(\d{4})\./.exec((await run("dpkg-query", ["-W", "-f=${Version}", "texlive-base"])).trim())?.[1];
  const version = debian ?? /version (\d{4})/.exec(release)?.[1] ?? /TeX Live (\d{4})/.exec(banner ?? "")?.[1] ?? null;
  return {
    texlive: { version, banner },
    engines: engines.map((name, i) => ({ name, version: firstLine(versions[i] ?? "") })),
    packages: pkgs,
    fonts: fams,
    generatedMs: Date.now() - started,
  };
}

/** The environment, read once per server (concurrent first requests share the one read). */
export class EnvironmentInfo {
  private value: Promise<Buffer> | undefined;
  private readonly engines: readonly Engine[];
  constructor(engines: readonly Engine[]) {
    this.engines = engines;
  }
  /** The JSON answer (kept serialised: it is the same for every request). */
  json(): Promise<Buffer> {
    this.value ??= read(this.engines).then((e) => Buffer.from(JSON.stringify(e)));
    return this.value;
  }
}
