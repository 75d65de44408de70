// Fonts a project brings (`.otf`/`.ttf`): fontspec finds them by file name as a bare engine does
// (kpathsea looks in the main file's folder), and by family name through what the engines ask:
// xelatex asks fontconfig, which a job with fonts is given a configuration for that adds the job's
// folder (`<dir>~</dir>`: HOME is the job folder); lualatex asks luaotfload's name database, built
// at image build without them, so the Lua sandbox answers for the project's families first (from
// TEXPOOL_FONTS, the families read here from the fonts' name tables).

/** Font files of a request that are read for their names. */
const MAX_FONTS = 64;
/** Name-table records looked at per font. */
const MAX_RECORDS = 512;

/** The fontconfig configuration a job with fonts gets, at the root of its folder. */
export const FONTCONFIG_NAME = ".texpool-fonts.conf";
export const FONTCONFIG =
  '<?xml version="1.0"?>\n<!DOCTYPE fontconfig SYSTEM "fonts.dtd">\n<fontconfig>\n' +
  '  <include ignore_missing="yes">/etc/fonts/fonts.conf</include>\n  <dir>~</dir>\n</fontconfig>\n';

export const isFontFile = (p: string) => /\.(otf|ttf)$/i.test(p);

export interface ProjectFont {
  family: string;
  /** The font's style name (`Regular`, `Bold Italic`, ...). */
  style: string;
  path: string;
}

function utf16be(b: Buffer, start: number, len: number): string {
  let s = "";
  for (let i = start; i + 1 < start + len; i += 2) s += String.fromCharCode(b.readUInt16BE(i));
  return s;
}

/**
 * The family and style of an OpenType/TrueType font from its name table (typographic names 16/17
 * where present, else 1/2; Windows Unicode records first, then Mac Roman), or undefined when the
 * data is not such a font. Every offset is checked against the data; the work is bounded.
 */
export function fontNames(data: Buffer): { family: string; style: string } | undefined {
  if (data.length < 12) return undefined;
  const tag = data.readUInt32BE(0);
  if (tag !== 0x00010000 && tag !== 0x4f54544f && tag !== 0x74727565) return undefined; // TrueType, "OTTO", "true"
  const numTables = data.readUInt16BE(4);
  if (12 + 16 * numTables > data.length) return undefined;
  let off = -1;
  let len = 0;
  for (let i = 0; i < numTables; i++) {
    const r = 12 + 16 * i;
    if (data.toString("latin1", r, r + 4) === "name") {
      off = data.readUInt32BE(r + 8);
      len = data.readUInt32BE(r + 12);
    }
  }
  if (off < 0 || len < 6 || off + len > data.length) return undefined;
  const count = Math.min(data.readUInt16BE(off + 2), MAX_RECORDS);
  const strings = off + data.readUInt16BE(off + 4);
  const found = new Map<number, string>();
  for (let i = 0; i < count; i++) {
    const r = off + 6 + 12 * i;
    if (r + 12 > off + len) break;
    const platform = data.readUInt16BE(r);
    const encoding = data.readUInt16BE(r + 2);
    const id = data.readUInt16BE(r + 6);
    const slen = data.readUInt16BE(r + 8);
    const start = strings + data.readUInt16BE(r + 10);
    if (![1, 2, 16, 17].includes(id) || start + slen > data.length) continue;
    const windows = platform === 3 && (encoding === 1 || encoding === 10);
    const mac = platform === 1 && encoding === 0;
    if (windows) found.set(id, utf16be(data, start, slen));
    else if (mac && !found.has(id)) found.set(id, data.toString("latin1", start, start + slen));
  }
  const family = (found.get(16) ?? found.get(1) ?? "").trim();
  const style = (found.get(17) ?? found.get(2) ?? "Regular").trim();
  return family ? { family, style } : undefined;
}

/** The project's fonts with their names (at most MAX_FONTS; a file that is not a font is left out). */
export function projectFonts(files: ReadonlyArray<{ path: string; data: Buffer }>): ProjectFont[] {
  const out: ProjectFont[] = [];
  for (const f of files) {
    if (!isFontFile(f.path) || out.length >= MAX_FONTS) continue;
    const n = fontNames(f.data);
    if (n) out.push({ ...n, path: f.path });
  }
  return out;
}

/** Names go to Lua through one variable, a line per font: tabs and newlines may not be in them. */
const clean = (s: string) => s.replace(/[\t\n\r\0]/g, " ");

/**
 * The environment of a job's processes when its project has fonts: fontconfig's configuration in
 * the job folder (`root`, as the processes see it) and the families for the Lua sandbox.
 */
export function fontEnv(fonts: ProjectFont[], root: string): Record<string, string> {
  if (fonts.length === 0) return {};
  return {
    FONTCONFIG_FILE: `${root}/${FONTCONFIG_NAME}`,
    TEXPOOL_FONTS: fonts.map((f) => `${clean(f.family)}\t${clean(f.style)}\t${clean(f.path)}\n`).join(""),
  };
}
