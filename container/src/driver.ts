// xelatex's PDF driver. Warm xelatex engines run with -no-pdf: each pass writes only
// main.xdv, and xdvipdfmx runs once, after the last pass. Left to itself xdvipdfmx parses
// every font map its dvipdfmx.cfg names on every run (pdftex.map alone is 4.5 MB with the
// full font set, ~0.3 s of CPU), although a document uses a handful of TFM fonts (OpenType
// fonts need no map). So the server reads the maps once, and each run gets a map of only
// the entries of the TFM fonts its .xdv names, with a copy of dvipdfmx.cfg that loads no
// other map. When the .xdv cannot be read, names a font the maps lack (a virtual font, a
// bitmap font) or the lean run fails, the driver runs again with the installation's own
// configuration: the output is always what xelatex's own driver run would give.
import { execFile } from "node:child_process";
import { constants, promises as fs } from "node:fs";
import path from "node:path";
import { texCommand, texHostPath } from "./texroot.ts";

/** The folder of a job directory the server writes the driver's lean configuration into (dot: no upload or TeX output can name it). */
export const DRIVER_DIR = ".texpool-driver";
export const DRIVER_MAP = "fonts.map";
/** xelatex's own driver command line (XeTeX's default output driver), writing main.pdf. */
export function driverArgs(xdv: string, pdf: string, map?: string): string[] {
  return ["-q", "-E", ...(map ? ["-f", map] : []), "-o", pdf, xdv];
}

/** The postamble (all font definitions) is read only when it is at most this long. */
const MAX_POSTAMBLE = 1024 * 1024;
const POST = 248;
const POST_POST = 249;
const FNT_DEF1 = 243;
const FNT_DEF4 = 246;
const NOP = 138;
/** XeTeX's native (OpenType/TrueType) font definition and its flags that add fields. */
const NATIVE_FONT_DEF = 252;
const XDV_FLAG_COLORED = 0x0200;
const XDV_FLAG_EXTEND = 0x1000;
const XDV_FLAG_SLANT = 0x2000;
const XDV_FLAG_EMBOLDEN = 0x4000;
const XDV_ID = 7;

/**
 * The TFM font names an .xdv file uses, from the font definitions of its postamble (a DVI
 * postamble repeats every font the pages use). `undefined` for anything unexpected: not
 * an .xdv of this XeTeX, a truncated file, a postamble over MAX_POSTAMBLE.
 */
export async function xdvTfmNames(file: string): Promise<string[] | undefined> {
  // O_NONBLOCK: a FIFO in its place must not block a thread of the pool
  const fh = await fs.open(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK).catch(() => undefined);
  if (!fh) return undefined;
  try {
    const { size } = await fh.stat();
    if (size < 64) return undefined;
    // post_post q[4] id[1] then 4 to 7 bytes 223
    const tail = Buffer.alloc(Math.min(size, 16));
    await fh.read(tail, 0, tail.length, size - tail.length);
    let k = tail.length - 1;
    while (k >= 0 && tail[k] === 223) k--;
    const trailer = tail.length - 1 - k;
    if (trailer < 4 || trailer > 7 || k < 5 || tail[k] !== XDV_ID || tail[k - 5] !== POST_POST) return undefined;
    const q = tail.readUInt32BE(k - 4);
    const end = size - (tail.length - (k - 5)); // offset of post_post
    if (q >= end || end - q > MAX_POSTAMBLE) return undefined;
    const buf = Buffer.alloc(end - q);
    const { bytesRead } = await fh.read(buf, 0, buf.length, q);
    if (bytesRead !== buf.length) return undefined;
    return postambleFonts(buf);
  } finally {
    await fh.close();
  }
}

/** Font names of a postamble (from `post` up to, not including, `post_post`). */
export function postambleFonts(b: Buffer): string[] | undefined {
  if (b[0] !== POST || b.length < 29) return undefined;
  const names = new Set<string>();
  let i = 29; // post p[4] num[4] den[4] mag[4] l[4] u[4] s[2] t[2]
  while (i < b.length) {
    const op = b[i]!;
    if (op === NOP) {
      i++;
    } else if (op >= FNT_DEF1 && op <= FNT_DEF4) {
      // fnt_def k[1..4] c[4] s[4] d[4] a[1] l[1] n[a+l]
      const at = i + 1 + (op - FNT_DEF1 + 1) + 12;
      if (at + 2 > b.length) return undefined;
      const [area, len] = [b[at]!, b[at + 1]!];
      // a font given with a directory (area) is left to the installation's configuration
      if (area !== 0 || len === 0 || at + 2 + len > b.length) return undefined;
      names.add(b.toString("latin1", at + 2, at + 2 + len));
      i = at + 2 + len;
    } else if (op === NATIVE_FONT_DEF) {
      // k[4] s[4] flags[2] l[1] path[l] index[4] [rgba[4]] [extend[4]] [slant[4]] [embolden[4]]
      if (i + 12 > b.length) return undefined;
      const flags = b.readUInt16BE(i + 9);
      let at = i + 12 + b[i + 11]! + 4;
      for (const f of [XDV_FLAG_COLORED, XDV_FLAG_EXTEND, XDV_FLAG_SLANT, XDV_FLAG_EMBOLDEN]) if (flags & f) at += 4;
      if (at > b.length) return undefined;
      i = at;
    } else return undefined;
  }
  return [...names];
}

/** The font maps dvipdfmx.cfg loads, indexed by TFM name, and the configuration without them. */
export class FontMaps {
  /** dvipdfmx.cfg without its `f` (map file) lines. */
  readonly leanCfg: string;
  private readonly byName: Map<string, string[]>;
  /** Entries whose name is a pattern (subfont definitions, name@sfd@): always included. */
  private readonly always: string[];

  constructor(cfgText: string, maps: string[]) {
    this.leanCfg = cfgText
      .split("\n")
      .filter((l) => !/^\s*f\s/.test(l))
      .join("\n");
    this.byName = new Map();
    this.always = [];
    for (const text of maps) {
      for (const raw of text.split("\n")) {
        const line = raw.trimEnd();
        const name = /^[^\s%#]\S*/.exec(line)?.[0];
        if (!name) continue;
        if (name.includes("@")) this.always.push(line);
        else {
          const list = this.byName.get(name);
          if (list) list.push(line);
          else this.byName.set(name, [line]);
        }
      }
    }
  }

  /** The map text for these fonts; undefined when one of them has no entry of its own. */
  subset(names: readonly string[]): string | undefined {
    const out = [...this.always];
    for (const n of names) {
      const lines = this.byName.get(n);
      if (!lines) return undefined;
      out.push(...lines);
    }
    return out.join("\n") + "\n";
  }

  get size(): number {
    return this.byName.size;
  }
}

function kpsewhich(args: string[], env: Record<string, string>): Promise<string[]> {
  return new Promise((resolve) => {
    const [file, argv] = texCommand("kpsewhich", ["-progname=dvipdfmx", ...args]);
    execFile(file, argv, { env, timeout: 10_000 }, (err, stdout) => resolve(err && !stdout ? [] : stdout.split("\n").filter(Boolean)));
  });
}

let loaded: Promise<FontMaps | undefined> | undefined;

/**
 * The installation's maps, read once (in `env`, the engines' environment, so kpathsea finds
 * what the driver would). undefined when dvipdfmx.cfg or one of its maps cannot be found: every
 * run then uses the installation's configuration.
 */
export function fontMaps(env: Record<string, string>): Promise<FontMaps | undefined> {
  loaded ??= (async () => {
    const [cfgPath] = await kpsewhich(["-format=other text files", "dvipdfmx.cfg"], env);
    if (!cfgPath) return undefined;
    const cfgText = await fs.readFile(texHostPath(cfgPath), "latin1");
    const mapNames = [...cfgText.matchAll(/^\s*f\s+(\S+)/gm)].map((m) => m[1]!);
    if (mapNames.length === 0) return undefined;
    const paths = await kpsewhich(["-format=map", ...mapNames], env);
    if (paths.length !== mapNames.length) return undefined;
    // `i` lines (included configurations) stay in the lean copy and are found on the default path
    const maps = await Promise.all(paths.map((p) => fs.readFile(texHostPath(p), "latin1")));
    return new FontMaps(cfgText, maps);
  })().catch(() => undefined);
  return loaded;
}

/** The map of only the fonts `xdvFile` uses; undefined when the job must use the installation's configuration. */
export async function leanMap(xdvFile: string, maps: FontMaps | undefined): Promise<string | undefined> {
  if (!maps) return undefined;
  const names = await xdvTfmNames(xdvFile);
  return names ? maps.subset(names) : undefined;
}

/**
 * Writes the lean configuration and this job's map into `<jobDir>/DRIVER_DIR`; returns false
 * (nothing written) when the job must use the installation's configuration.
 */
export async function writeLeanDriver(jobDir: string, xdvFile: string, maps: FontMaps | undefined, own: (p: string) => Promise<void>): Promise<boolean> {
  const map = await leanMap(xdvFile, maps);
  if (map === undefined || !maps) return false;
  const dir = path.join(jobDir, DRIVER_DIR);
  try {
    // never follows or reuses anything already there (then: the installation's configuration)
    await fs.mkdir(dir, { mode: 0o700 });
    await own(dir);
    for (const [name, text] of [["dvipdfmx.cfg", maps.leanCfg], [DRIVER_MAP, map]] as const) {
      const fh = await fs.open(path.join(dir, name), constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
      try {
        await fh.writeFile(text, "latin1");
      } finally {
        await fh.close();
      }
      await own(path.join(dir, name));
    }
    return true;
  } catch {
    return false;
  }
}
