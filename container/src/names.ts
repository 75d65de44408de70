// The file names a project may use, shared by the compile server and the Worker's request schema
// (pure: no Node or Workers API). Real projects use any UTF-8 name their file system allows:
// spaces, letters of any script, dotfiles (`.latexmkrc`), main files named `.xtx` or `.ltx`. What
// stays out: anything that leaves the project (`..`, absolute paths), names no file system or
// shell-free tool takes safely (control characters, NUL, lone surrogates, bidirectional overrides
// that make a name read as another), and the folders the server itself puts in a job's root.

/** Levels of folders (the file's own name included). */
export const MAX_PATH_DEPTH = 16;
/** Characters of a whole path. */
export const MAX_PATH_CHARS = 400;
/** UTF-8 bytes of one name: the common file system limit. */
export const MAX_NAME_BYTES = 255;

/** Top-level names the server makes in job folders (lualatex's font caches, xelatex's driver files, fontconfig's configuration). */
export const RESERVED_TOP: ReadonlySet<string> = new Set([".texmf-var", ".texpool-driver", ".texpool-fonts.conf"]);

/**
 * Extensions of what TeX and the tools write next to the main file: a main file with one of them
 * would be overwritten by its own output.
 */
const OUTPUT_EXTENSIONS: ReadonlySet<string> = new Set(
  ["aux", "log", "pdf", "xdv", "dvi", "fls", "fmt", "toc", "lof", "lot", "out", "bbl", "blg", "bcf", "idx", "ind", "ilg", "glo", "gls", "glg", "ist", "nav", "snm", "vrb", "synctex", "run.xml"],
);

/** A character no project name may hold: C0/C1 controls, DEL, bidirectional controls, BOM. */
function forbiddenChar(c: number): boolean {
  return c < 0x20 || (c >= 0x7f && c <= 0x9f) || (c >= 0x202a && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069) || c === 0x200e || c === 0x200f || c === 0xfeff;
}

function utf8Bytes(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff) {
      n += 4;
      i++;
    } else n += 3;
  }
  return n;
}

/**
 * Why `p` is not a project path (undefined: it is one): relative, `/`-separated, already normal
 * (no empty, `.` or `..` segments), well-formed UTF-8 without control characters. One linear pass.
 */
export function pathIssue(p: unknown): string | undefined {
  if (typeof p !== "string" || p.length === 0) return "must be a non-empty string";
  if (p.length > MAX_PATH_CHARS) return `must be at most ${MAX_PATH_CHARS} characters`;
  if (p.startsWith("/")) return "must be relative (no leading /)";
  for (let i = 0; i < p.length; i++) {
    const c = p.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdfff) {
      // a surrogate pair is one character; a lone half has no UTF-8 form
      const next = p.charCodeAt(i + 1);
      if (c > 0xdbff || !(next >= 0xdc00 && next <= 0xdfff)) return "must be well-formed Unicode";
      i++;
      continue;
    }
    if (c === 0x5c) return "must use / as separator (no backslash)";
    if (forbiddenChar(c)) return "must not contain control or bidirectional-override characters";
  }
  const segs = p.split("/");
  if (segs.length > MAX_PATH_DEPTH) return `must be at most ${MAX_PATH_DEPTH} levels deep`;
  for (const s of segs) {
    if (s === "..") return "must not contain .. (it would leave the project)";
    if (s === "" || s === ".") return "must be normalised (no empty or . segments)";
    if (s.trim() !== s) return "names must not begin or end with a space";
    if (utf8Bytes(s) > MAX_NAME_BYTES) return `each name must be at most ${MAX_NAME_BYTES} bytes of UTF-8`;
  }
  if (RESERVED_TOP.has(segs[0]!)) return `${segs[0]} is a folder of the compile server's`;
  return undefined;
}

/** The extension of a file name (after its last dot; not a leading one), or "". */
export function extensionOf(name: string): string {
  const i = name.lastIndexOf(".");
  return i > 0 ? name.slice(i + 1) : "";
}

/**
 * Characters TeX would expand, or end a file name at (and `"`, its quote): the main file's name,
 * which the server hands to TeX, may not hold them (other files are named by the document itself).
 */
export const TEX_SPECIAL_CHAR = /[\\{}%#^~"$&]/;

/** Why `p` cannot be the main file (undefined: it can): a project path whose name has an extension TeX does not write. */
export function mainPathIssue(p: unknown): string | undefined {
  const issue = pathIssue(p);
  if (issue) return issue;
  const name = (p as string).slice((p as string).lastIndexOf("/") + 1);
  if (TEX_SPECIAL_CHAR.test(name)) return 'the main file\'s name must not contain \\ { } % # ^ ~ " $ &';
  const ext = extensionOf(name).toLowerCase();
  if (!/^[a-z0-9]{1,12}$/.test(ext)) return "must name a file with an extension (e.g. .tex, .ltx, .xtx)";
  if (OUTPUT_EXTENSIONS.has(ext)) return `must not have the extension .${ext} (TeX writes that file itself)`;
  return undefined;
}

/** TeX's job name for a main file: its name without the extension (`thesis.v2.tex` → `thesis.v2`). */
export function jobBase(mainFile: string): string {
  const name = mainFile.slice(mainFile.lastIndexOf("/") + 1);
  const i = name.lastIndexOf(".");
  return i > 0 ? name.slice(0, i) : name;
}
