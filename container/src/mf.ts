// Bitmap fonts made on demand from TeX Live's own METAFONT sources (bbm, blackboard bold, lh's
// T2B/T2C metrics, ...). Jobs never run METAFONT (MKTEXPK=0, MKTEXTFM=0): when a compile fails on
// such a font, the server makes it in a step of its own — a fresh, empty folder (so only TeX Live's
// sources can be found, never a project's `.mf`), in the sandbox — and keeps the result in a cache
// every job reads (VARTEXFONTS, bound read-only in the sandbox), then compiles again.
import { promises as fs } from "node:fs";
import { randomBytes } from "node:crypto";
import path from "node:path";
import type { Config } from "./config.ts";
import { spawnLimited, spawnOptions } from "./engine.ts";
import { makeJobDir, removeDir } from "./pool.ts";
import { closeOf } from "./supervise.ts";
import { WorkDir } from "./workdir.ts";

/** A font a compile stopped on: a bitmap at `dpi` (pdfTeX, LuaTeX), or its metrics (`dpi` undefined). */
export interface MissingFont {
  font: string;
  dpi?: number;
}

/** The mode bitmaps are made for: pdfTeX's and dvipdfmx's default (600 dpi). */
const MODE = "ljfour";
const BASE_DPI = 600;
const FONT_NAME = /^[A-Za-z0-9_-]{1,64}$/;
/** Fonts one job may have made (each costs a METAFONT run and another compile). */
export const MAX_FONTS_PER_JOB = 4;
/** Files in the cache: past this, nothing more is made. */
const MAX_CACHE_FILES = 2000;
const MAX_FONT_BYTES = 4 * 1024 * 1024;
/** Where TeX Live's own sources are (what kpsewhich finds from an empty folder must be below one). */
const SOURCE_ROOTS = ["/usr/share/texlive/", "/usr/share/texmf/", "/usr/local/share/texmf/", "/usr/share/texmf-dist/"];

const digitsAt = (s: string, i: number) => {
  let j = i;
  while (j < s.length && j < i + 6 && s.charCodeAt(j) >= 48 && s.charCodeAt(j) <= 57) j++;
  return j;
};

/**
 * The font of a compile error that a METAFONT run could fix: "(file bbm10): Font bbm10 at 600 not
 * found" (pdfTeX; LuaTeX: "(file bbm10) (type 3): font bbm10 at 600 not found"), or "Font \x=bbmx10
 * at 10.0pt not loadable: Metric (TFM) file not found". Linear scans of one message.
 */
export function missingFont(message: string): MissingFont | undefined {
  const f = message.indexOf("(file ");
  if (f >= 0) {
    const close = message.indexOf(")", f);
    const font = message.slice(f + "(file ".length, close < 0 ? f : close);
    const marker = `ont ${font} at `;
    const k = close < 0 ? -1 : message.indexOf(marker, close);
    if (k >= 0 && FONT_NAME.test(font)) {
      const start = k + marker.length;
      const end = digitsAt(message, start);
      if (end > start && message.startsWith(" not found", end)) return { font, dpi: Number(message.slice(start, end)) };
    }
  }
  const nm = message.indexOf(" not loadable: Metric (TFM) file not found");
  if (nm < 0) return undefined;
  const head = message.lastIndexOf("Font ", nm);
  const eq = message.lastIndexOf("=", nm);
  if (head < 0 || eq < head) return undefined;
  const sp = message.indexOf(" ", eq);
  const font = message.slice(eq + 1, sp < 0 || sp > nm ? nm : sp);
  return FONT_NAME.test(font) ? { font } : undefined;
}

/** Creates the cache folder before any engine starts (the sandbox binds it only if it exists). */
export async function prepareFontCache(cfg: Config): Promise<void> {
  if (!cfg.mfCacheDir) return;
  for (const sub of ["", "pk", `pk/${MODE}`, `pk/${MODE}/texpool`, "tfm", "tfm/texpool"]) {
    const d = path.join(cfg.mfCacheDir, sub);
    await fs.mkdir(d, { recursive: true, mode: 0o755 });
    await fs.chmod(d, 0o755);
  }
}

const pkPath = (cache: string, font: string, dpi: number) => path.join(cache, "pk", MODE, "texpool", `${font}.${dpi}pk`);
const tfmPath = (cache: string, font: string) => path.join(cache, "tfm", "texpool", `${font}.tfm`);

const exists = (p: string) => fs.stat(p).then(() => true, () => false);

/** Makes fonts into the cache, one METAFONT run per font and resolution at a time. */
export class FontMaker {
  private readonly cfg: Config;
  private readonly running = new Map<string, Promise<boolean>>();
  private files = 0;

  constructor(cfg: Config) {
    this.cfg = cfg;
  }

  /** Whether `f` is in the cache now (made by this call or an earlier one); false when it cannot be made. */
  ensure(f: MissingFont, timeoutMs: number): Promise<boolean> {
    const cache = this.cfg.mfCacheDir;
    const dpi = f.dpi ?? BASE_DPI;
    if (!cache || !FONT_NAME.test(f.font) || !Number.isInteger(dpi) || dpi < 100 || dpi > 4 * BASE_DPI || timeoutMs < 500) return Promise.resolve(false);
    const key = `${f.font}@${dpi}`;
    let p = this.running.get(key);
    if (!p) {
      p = this.make(cache, f.font, dpi, f.dpi === undefined, timeoutMs).finally(() => this.running.delete(key));
      this.running.set(key, p);
    }
    return p;
  }

  private async make(cache: string, font: string, dpi: number, metrics: boolean, timeoutMs: number): Promise<boolean> {
    if (await exists(metrics ? tfmPath(cache, font) : pkPath(cache, font, dpi))) return true;
    if (this.files >= MAX_CACHE_FILES) return false;
    const deadline = Date.now() + timeoutMs;
    const dir = await makeJobDir(this.cfg);
    try {
      // from an empty folder, kpsewhich finds the source in TeX Live's trees or nowhere
      const src = await this.run(dir, "kpsewhich", [`${font}.mf`], deadline);
      const where = src.out.trim();
      if (src.code !== 0 || !SOURCE_ROOTS.some((r) => where.startsWith(r))) return false;
      const hasTfm = (await this.run(dir, "kpsewhich", [`${font}.tfm`], deadline)).code === 0;
      const mf = await this.run(dir, "mf", ["-interaction=batchmode", `\\mode:=${MODE}; mag:=${dpi}/${BASE_DPI}; nonstopmode; input ${font}`], deadline);
      if (mf.code !== 0) return false;
      const gf = await this.run(dir, "gftopk", [`${font}.${dpi}gf`, `${font}.${dpi}pk`], deadline);
      if (gf.code !== 0) return false;
      const work = new WorkDir(dir);
      const ok = await this.keep(work, `${font}.${dpi}pk`, pkPath(cache, font, dpi));
      // metrics only where TeX Live has none: its own are never shadowed
      if (ok && !hasTfm) await this.keep(work, `${font}.tfm`, tfmPath(cache, font));
      return ok && (!metrics || (await exists(tfmPath(cache, font))));
    } finally {
      await removeDir(dir);
    }
  }

  /** Copies a file METAFONT made into the cache, whole or not at all (a new name, then a rename). */
  private async keep(work: WorkDir, name: string, dest: string): Promise<boolean> {
    const tmp = `${dest}.${randomBytes(6).toString("hex")}.tmp`;
    const size = await work.copyOut(name, tmp, MAX_FONT_BYTES);
    if (size === undefined) return false;
    await fs.chmod(tmp, 0o444);
    await fs.rename(tmp, dest);
    this.files++;
    return true;
  }

  /** One program in the sandbox, in folder `dir`; its exit code and the start of its output. */
  private async run(dir: string, cmd: string, args: string[], deadline: number): Promise<{ code: number | null; out: string }> {
    const child = spawnLimited(cmd, args, spawnOptions(this.cfg, dir));
    child.stdin!.end();
    let out = "";
    child.stdout!.on("data", (c: Buffer) => {
      if (out.length < 4096) out += c.toString("utf8");
    });
    child.stderr!.resume();
    const r = await closeOf(child, Math.max(1, deadline - Date.now()));
    return { code: r.code, out };
  }
}
