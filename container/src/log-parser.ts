// Parser for TeX logs written with -file-line-error and a wide max_print_line.
// Finds errors (with file and line), warnings (undefined references/citations,
// over/underfull boxes, package warnings), the page count and the log tail.
//
// The log is user-controlled text (a document can \message anything), so every
// scan here is linear: only the last PARSE_BYTES of a log are read, each line is
// capped, lines are classified with indexOf/startsWith, look-aheads stop once the
// error and warning lists are full, and the only regexes are anchored ones without
// overlapping quantifiers.

export interface LogError {
  message: string;
  file?: string;
  line?: number;
}

export type WarningKind =
  | "undefined_reference"
  | "undefined_citation"
  | "overfull_box"
  | "underfull_box"
  | "missing_character"
  | "font"
  | "package"
  | "latex"
  /** A setting of the project's latexmkrc that was not honoured (it is read, never run). */
  | "project"
  /** An error TeX went on after (the request's haltOnError: false). */
  | "error";

export interface LogWarning {
  kind: WarningKind;
  message: string;
  file?: string;
  line?: number;
}

export interface ParsedLog {
  errors: LogError[];
  warnings: LogWarning[];
  pages?: number;
  /** true when the run ended at end of input without \end{document} */
  missingEnd: boolean;
}

/** With -halt-on-error the error, the page count and the rerun requests are at the end. */
export const PARSE_BYTES = 1024 * 1024;
/** TeX wraps at max_print_line (10000); anything longer is not TeX's own output. */
const MAX_LINE = 12_000;
const MAX_ERRORS = 20;
const MAX_WARNINGS = 200;
const MAX_MESSAGE = 1000;

/** The last `maxChars` characters of `s`, starting at a line start when it had to cut. */
function tailLines(s: string, maxChars: number): string {
  if (s.length <= maxChars) return s;
  const t = s.slice(s.length - maxChars);
  const nl = t.indexOf("\n");
  return nl >= 0 ? t.slice(nl + 1) : t;
}

/** Splits into lines (without "\r"), each capped at MAX_LINE characters. */
export function splitLines(s: string): string[] {
  const out: string[] = [];
  let pos = 0;
  while (pos <= s.length) {
    let nl = s.indexOf("\n", pos);
    if (nl < 0) nl = s.length;
    let end = nl;
    if (end > pos && s.charCodeAt(end - 1) === 13) end--;
    out.push(s.slice(pos, Math.min(end, pos + MAX_LINE)));
    pos = nl + 1;
  }
  return out;
}

/**
 * The lines of `s` that start with one of `prefixes`, in order, each capped at MAX_LINE
 * characters (without "\r"). Each prefix is looked for with indexOf("\n" + prefix): the
 * other lines are skipped at search speed and never copied, so a file of millions of
 * lines that matter to nobody costs one pass per prefix, not an array of millions.
 */
export function linesWith(s: string, prefixes: readonly string[]): string[] {
  const needles = prefixes.map((p) => `\n${p}`);
  // next[j]: where the next line starting with prefixes[j] starts (s.length: none left)
  const find = (j: number, from: number) => {
    const k = s.indexOf(needles[j]!, from - 1);
    return k < 0 ? s.length : k + 1;
  };
  const next = prefixes.map((p, j) => (s.startsWith(p) ? 0 : find(j, 1)));
  const out: string[] = [];
  for (;;) {
    let start = s.length;
    for (const n of next) if (n < start) start = n;
    if (start >= s.length) return out;
    let nl = s.indexOf("\n", start);
    if (nl < 0) nl = s.length;
    let end = Math.min(nl, start + MAX_LINE);
    if (end === nl && end > start && s.charCodeAt(end - 1) === 13) end--;
    out.push(s.slice(start, end));
    for (let j = 0; j < next.length; j++) if (next[j]! < nl + 1) next[j] = find(j, nl + 1);
  }
}

const isDigit = (c: number) => c >= 48 && c <= 57;
const isAlnum = (c: number) => isDigit(c) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
const isSpace = (c: number) => c === 32 || c === 9 || c === 13 || c === 10;

/** "file.ext:123: message" (TeX's -file-line-error form), else undefined. */
export function fileLine(l: string): { file: string; line: number; text: string } | undefined {
  const colon = l.indexOf(":");
  if (colon <= 0 || isSpace(l.charCodeAt(0))) return undefined;
  const dot = l.lastIndexOf(".", colon);
  if (dot < 0 || dot >= colon - 1) return undefined;
  for (let k = dot + 1; k < colon; k++) if (!isAlnum(l.charCodeAt(k))) return undefined;
  let j = colon + 1;
  while (j < l.length && j < colon + 12 && isDigit(l.charCodeAt(j))) j++;
  if (j === colon + 1 || !l.startsWith(": ", j)) return undefined;
  return { file: cleanFile(l.slice(0, colon)), line: Number(l.slice(colon + 1, j)), text: l.slice(j + 2) };
}

/** "l.123 ..." context line of an error, else undefined. */
function contextLine(l: string): number | undefined {
  if (!l.startsWith("l.")) return undefined;
  let j = 2;
  while (j < l.length && j < 14 && isDigit(l.charCodeAt(j))) j++;
  if (j === 2 || (j < l.length && l[j] !== " ")) return undefined;
  return Number(l.slice(2, j));
}

function cleanFile(f: string): string {
  return f.startsWith("./") ? f.slice(2) : f;
}

function clip(s: string): string {
  return s.length > MAX_MESSAGE ? `${s.slice(0, MAX_MESSAGE)}…` : s;
}

/** "(pkgname)   text": a continuation line of a package message, or undefined. */
function packageContinuation(l: string): string | undefined {
  if (!l.startsWith("(")) return undefined;
  // a package name of at most 63 characters: never a search along the whole line
  let close = 1;
  for (; close < l.length && close <= 64 && l[close] !== ")"; close++) {
    const c = l.charCodeAt(close);
    if (!(isAlnum(c) || c === 64 || c === 46 || c === 95 || c === 45)) return undefined; // @ . _ -
  }
  if (close < 2 || close > 64 || l[close] !== ")") return undefined;
  if (!isSpace(l.charCodeAt(close + 1))) return undefined;
  return l.slice(close + 1).trim();
}

/** Joins a message split by TeX's own message wrapping (continuation lines of packages). */
function continuation(lines: string[], i: number, first: string): string {
  let msg = first;
  // "FancyVerb Error:" and other \PackageError-less messages put their text on the next, indented line
  const next = lines[i + 1] ?? "";
  if (first.endsWith("Error:") && next.startsWith("  ") && next.trim() !== "") return clip(`${first} ${next.trim()}`);
  for (let j = i + 1; j < lines.length && j < i + 8; j++) {
    const c = packageContinuation(lines[j] ?? "");
    if (c === undefined) break;
    msg += " " + c;
  }
  return clip(msg.trim());
}

/** Lines that only repeat that TeX stopped; never the cause. */
function isConsequence(text: string): boolean {
  const t = text.trimStart();
  return t.startsWith("==> Fatal error occurred") || t.startsWith("*** (job aborted");
}

/** "Package NAME Warning: " / "Class NAME Warning: " prefix: the part after it, else undefined. */
function namedWarning(l: string, kind: "Package " | "Class "): string | undefined {
  if (!l.startsWith(kind)) return undefined;
  const sp = l.indexOf(" ", kind.length);
  if (sp <= kind.length || !l.startsWith(" Warning: ", sp)) return undefined;
  return l.slice(sp + " Warning: ".length);
}

/** "... on input line N." at the end of a message. */
function inputLine(msg: string): number | undefined {
  const k = msg.lastIndexOf("on input line ");
  if (k < 0) return undefined;
  let j = k + "on input line ".length;
  const s = j;
  while (j < msg.length && j < s + 10 && isDigit(msg.charCodeAt(j))) j++;
  return j > s ? Number(msg.slice(s, j)) : undefined;
}

/** Lines that tell which file TeX was reading, for errors printed without one. */
function nearestFile(lines: string[], from: number): string | undefined {
  for (let j = from; j < lines.length && j < from + 30; j++) {
    const fl = fileLine(lines[j] ?? "");
    if (fl) return fl.file;
  }
  return undefined;
}

/** Line (from "l.N") and file (from the next file:line: line) of an error printed without them. */
function locate(lines: string[], from: number, e: LogError): void {
  for (let j = from; j < lines.length && j < from + 30; j++) {
    const c = contextLine(lines[j] ?? "");
    if (c !== undefined) {
      e.line = c;
      break;
    }
    const f = fileLine(lines[j] ?? "");
    if (f) {
      e.file = f.file;
      e.line = f.line;
      break;
    }
  }
  if (e.file === undefined) {
    const f = nearestFile(lines, from);
    if (f !== undefined) e.file = f;
  }
}

export const DRIVER_FAILED =
  "The PDF driver (xdvipdfmx) failed: usually a font that has no Type 1 or OpenType version (bitmap fonts are not generated here) or an image it cannot read.";

/**
 * "pdfTeX error: pdflatex (file bbm10): Font bbm10 at 600 not found" (and LuaTeX's
 * "(type 3): font bbm10 at 600 not found"): the font exists only as METAFONT source.
 */
function bitmapFontHint(e: LogError): void {
  const m = e.message;
  const f = m.indexOf("(file ");
  if (f < 0 || !m.endsWith(" not found")) return;
  const close = m.indexOf(")", f);
  if (close < 0) return;
  const font = m.slice(f + "(file ".length, close);
  e.message = clip(
    `Font ${font} has no Type 1 or OpenType version, only METAFONT sources, and bitmap fonts are not generated here (${m}). Use another font or package for it.`,
  );
}

const NO_METRIC = " not loadable: Metric (TFM) file not found";

/**
 * "Font LHE/cmr/m/n/10=jerus10 at 10.0pt not loadable: Metric (TFM) file not found.":
 * the font has no metric file here (METAFONT sources only, whose metrics are not
 * generated in jobs, or not installed at all). Name it and say what works instead.
 */
function missingMetricHint(e: LogError): void {
  const m = e.message;
  const at = m.indexOf(NO_METRIC);
  if (!m.startsWith("Font ") || at < 0) return;
  const head = m.slice("Font ".length, at); // "LHE/cmr/m/n/10=jerus10 at 10.0pt", or "\x=name" for plain \font
  const eq = head.lastIndexOf("=");
  const sp = head.indexOf(" ", eq + 1);
  const font = head.slice(eq + 1, sp < 0 ? head.length : sp);
  if (!font) return;
  e.message = clip(
    `Font ${font} is not available to the TeX engine here: it has no metric (TFM) file (it exists only as METAFONT sources, whose fonts are not generated here, or is not installed). ` +
      `Use another font or font encoding, or compile with xelatex or lualatex and an OpenType font (fontspec, babel or polyglossia). (${m})`,
  );
}

export function parseLog(fullLog: string, maxChars = PARSE_BYTES): ParsedLog {
  const log = tailLines(fullLog, maxChars);
  const lines = splitLines(log);
  const errors: LogError[] = [];
  const warnings: LogWarning[] = [];
  let pages: number | undefined;
  let missingEnd = log.includes("no legal \\end found");
  let runaway: string | undefined; // "Runaway argument?" and the text after it
  const addError = (e: LogError) => {
    if (errors.length < MAX_ERRORS) errors.push(e);
  };
  const addWarning = (w: LogWarning) => {
    if (warnings.length < MAX_WARNINGS) warnings.push(w);
  };

  for (let i = 0; i < lines.length; i++) {
    const l = lines[i] ?? "";

    const fl = fileLine(l);
    if (fl) {
      if (isConsequence(fl.text) || (fl.text === "Emergency stop." && errors.length > 0)) continue;
      // no more errors are kept: skip the look-ahead (every line of a log could be one)
      if (errors.length >= MAX_ERRORS) {
        runaway = undefined;
        continue;
      }
      let message = continuation(lines, i, fl.text);
      if (runaway !== undefined) message = clip(`${runaway}: ${message}`);
      runaway = undefined;
      const e: LogError = { message, file: fl.file, line: fl.line };
      missingMetricHint(e);
      addError(e);
      continue;
    }
    if (l.startsWith("Runaway ") && l.endsWith("?")) {
      // "Runaway argument?" then the text that ran away, then the error itself
      const what = l.slice("Runaway ".length, -1);
      const text = (lines[i + 1] ?? "").trim().slice(0, 60);
      runaway = `Runaway ${what}${text ? ` (${text}…)` : ""}`;
      i++;
      continue;
    }
    if (l.startsWith("!")) {
      // "! message" (TeX), "!pdfTeX error: ..." / "!LuaTeX error: ..." (engine)
      const text = l.slice(l.startsWith("! ") ? 2 : 1).trim();
      if (isConsequence(text)) continue;
      if (text === "Emergency stop.") {
        // "! Emergency stop." then "<*> ..." says TeX asked the (closed) terminal for input
        if ((lines[i + 1] ?? "").startsWith("<*>")) missingEnd = true;
        if (missingEnd || errors.length > 0) continue;
      }
      if (errors.length >= MAX_ERRORS) {
        runaway = undefined;
        continue;
      }
      const e: LogError = { message: continuation(lines, i, runaway !== undefined ? `${runaway}: ${text}` : text) };
      runaway = undefined;
      bitmapFontHint(e);
      missingMetricHint(e);
      locate(lines, i + 1, e);
      addError(e);
      continue;
    }
    if (l.startsWith("Error ") && l.includes("(driver return code)")) {
      // xelatex: the PDF driver failed after the engine finished (its reason went to stderr)
      addError({ message: DRIVER_FAILED });
      continue;
    }
    // a Lua error: "[\directlua]:1: message" or "file.lua:12: message", then the traceback;
    // TeX may have closed a file's parenthesis on the same line: ")[\directlua]:1: ..."
    let k = 0;
    while (k < l.length && k < 64 && (l[k] === ")" || l[k] === " ")) k++;
    if ((lines[i + 1] ?? "") === "stack traceback:" || l.startsWith("[\\directlua]:", k) || l.startsWith("[\\latelua]:", k)) {
      if (errors.length >= MAX_ERRORS) continue;
      const e: LogError = { message: clip(`Lua error: ${l.slice(k).trim()}`) };
      locate(lines, i + 1, e);
      addError(e);
      continue;
    }

    const latex = l.startsWith("LaTeX Warning: ") ? l.slice("LaTeX Warning: ".length) : undefined;
    const pkg = latex === undefined ? namedWarning(l, "Package ") : undefined;
    const refText = latex ?? pkg;
    if (refText !== undefined && (refText.startsWith("Reference `") || refText.startsWith("Citation `")) && refText.includes("' on page ") && refText.includes(" undefined on input line ")) {
      addWarning({
        kind: refText.startsWith("Reference") ? "undefined_reference" : "undefined_citation",
        message: clip(refText),
        line: inputLine(refText),
      });
      continue;
    }
    if (latex !== undefined && latex.startsWith("There were undefined references.")) {
      addWarning({ kind: "undefined_reference", message: clip(latex) });
      continue;
    }
    if (latex !== undefined && latex.startsWith("There were undefined citations.")) {
      addWarning({ kind: "undefined_citation", message: clip(latex) });
      continue;
    }
    if (l.startsWith("Overfull \\hbox ") || l.startsWith("Overfull \\vbox ") || l.startsWith("Underfull \\hbox ") || l.startsWith("Underfull \\vbox ")) {
      const at = l.indexOf("at line");
      let line: number | undefined;
      if (at >= 0) {
        let j = at + "at line".length;
        if (l[j] === "s") j++;
        if (l[j] === " ") {
          const s = ++j;
          while (j < l.length && j < s + 10 && isDigit(l.charCodeAt(j))) j++;
          if (j > s) line = Number(l.slice(s, j));
        }
      }
      addWarning({ kind: l.startsWith("Overfull") ? "overfull_box" : "underfull_box", message: clip(l.trim()), line });
      continue;
    }
    if (l.startsWith("Missing character: ")) {
      addWarning({ kind: "missing_character", message: clip(l.trim()) });
      continue;
    }
    const font = l.startsWith("LaTeX Font Warning: ") ? l.slice("LaTeX Font Warning: ".length) : undefined;
    const other = font ?? latex ?? pkg ?? namedWarning(l, "Class ");
    if (other !== undefined) {
      if (warnings.length >= MAX_WARNINGS) continue;
      const kind: WarningKind = font !== undefined ? "font" : latex !== undefined ? "latex" : "package";
      const message = continuation(lines, i, other);
      addWarning({ kind, message, line: inputLine(message) });
      continue;
    }
    if (l.startsWith("Output written on ")) {
      // "Output written on main.pdf (3 pages, 1234 bytes)."
      const k = l.lastIndexOf(" (");
      if (k >= 0) {
        let j = k + 2;
        while (j < l.length && j < k + 12 && isDigit(l.charCodeAt(j))) j++;
        if (j > k + 2 && l.startsWith(" page", j)) pages = Number(l.slice(k + 2, j));
      }
      continue;
    }
  }

  if (missingEnd) {
    const e: LogError = { message: "Missing \\end{document}: the input ended before the document did.", file: "main.tex" };
    errors.unshift(e);
    if (errors.length > MAX_ERRORS) errors.length = MAX_ERRORS;
  }
  return { errors, warnings, pages, missingEnd };
}

/** The line that asked for a missing file is in the preamble: the first 256 KiB of the source are enough. */
const MAX_SOURCE_SCAN = 256 * 1024;

/** Lines of `s` (a final newline ends the last line, it does not start another), without copying it. */
function lineCount(s: string): number {
  let n = 1;
  for (let i = s.indexOf("\n"); i >= 0 && i < s.length - 1; i = s.indexOf("\n", i + 1)) n++;
  return n;
}

/**
 * The error a failed run is reported by: the first one in the log, pointed at the
 * line of the main file that caused it where the log points elsewhere.
 */
export function firstCause(parsed: ParsedLog, source: string, mainFile: string, fallback: string): { first: LogError; errors: LogError[] } {
  const errors = parsed.errors.length ? parsed.errors.map((e) => ({ ...e })) : [{ message: fallback }];
  const first = errors[0] as LogError;
  if (parsed.missingEnd && first.line === undefined) first.line = lineCount(source);
  locateMissingFile(first, source, mainFile);
  return { first, errors };
}

const BOOT = "\\message{TEXPOOL-READY}";
const BOOT_END = "\\texpoolgo";

/** Hides the bootstrap line (it names server paths) wherever TeX echoes it. Linear. */
function hideBootstrap(s: string): string {
  let out = "";
  let pos = 0;
  for (;;) {
    const b = s.indexOf(BOOT, pos);
    if (b < 0) break;
    let eol = s.indexOf("\n", b);
    if (eol < 0) eol = s.length;
    const e = s.indexOf(BOOT_END, b);
    if (e < 0) break;
    if (e > eol) {
      // no end on this line: later starts on the same line cannot have one either
      out += s.slice(pos, eol);
      pos = eol;
      continue;
    }
    out += s.slice(pos, b) + "main.tex";
    pos = e + BOOT_END.length;
  }
  return out + s.slice(pos);
}

/** The last `maxBytes` bytes of the log, cut at a line start, without our bootstrap line. */
export function logTail(log: string, maxBytes: number): string {
  // characters are at least one byte: this slice holds more than maxBytes bytes
  const cut = log.length > maxBytes + 1024;
  const cleaned = hideBootstrap(cut ? log.slice(log.length - maxBytes - 1024) : log);
  const buf = Buffer.from(cleaned, "utf8");
  if (buf.length <= maxBytes) {
    if (!cut) return cleaned;
    const nl = cleaned.indexOf("\n"); // the slice began inside a line
    return nl >= 0 ? cleaned.slice(nl + 1) : cleaned;
  }
  let tail = buf.subarray(buf.length - maxBytes).toString("utf8");
  const nl = tail.indexOf("\n");
  if (nl >= 0 && nl < tail.length - 1) tail = tail.slice(nl + 1);
  return tail;
}

const RERUN_NEEDLES = ["rerun to get", "please rerun latex", "rerun latex", "may have changed", "label(s) may have changed", "citation(s) may have changed"];

/** True when LaTeX or a package says another pass is needed. */
export function logAsksRerun(log: string): boolean {
  const low = log.toLowerCase();
  if (RERUN_NEEDLES.some((n) => low.includes(n))) return true;
  // "(rerunfilecheck)      Rerun to get outlines right" is covered above; its other form:
  let pos = 0;
  for (;;) {
    const k = low.indexOf("(rerunfilecheck)", pos);
    if (k < 0) return false;
    let j = k + "(rerunfilecheck)".length;
    while (j < low.length && isSpace(low.charCodeAt(j))) j++;
    if (low.startsWith("rerun", j)) return true;
    pos = j;
  }
}

/**
 * "File `x.sty' not found" is reported where TeX stopped reading, often the line
 * after the \usepackage; point at the line of `source` (its first MAX_SOURCE_SCAN
 * characters, where preambles are) that asked for the file, outside comments.
 * Linear in the characters scanned, whatever the name (a name of blanks matches at
 * every blank of a line: each is checked in constant time, see askedOn).
 */
export function locateMissingFile(e: LogError, source: string, mainFile: string): void {
  const open = e.message.indexOf("File `");
  const close = open < 0 ? -1 : e.message.indexOf("' not found", open);
  if (close < 0 || (e.file !== undefined && e.file !== mainFile)) return;
  let name = e.message.slice(open + "File `".length, close);
  let cmds = ["\\input", "\\include", "\\usepackage", "\\documentclass", "\\RequirePackage"];
  if (name.endsWith(".sty")) {
    name = name.slice(0, -4);
    cmds = ["\\usepackage", "\\RequirePackage"];
  } else if (name.endsWith(".cls")) {
    name = name.slice(0, -4);
    cmds = ["\\documentclass"];
  }
  if (!name || name.length > 255) return;
  const border = prefixTable(name);
  const lines = splitLines(source.length > MAX_SOURCE_SCAN ? source.slice(0, MAX_SOURCE_SCAN) : source);
  for (let i = 0; i < lines.length; i++) {
    const l = uncommented(lines[i] ?? "");
    let from = -1;
    for (const c of cmds) {
      const k = l.indexOf(c);
      if (k >= 0 && (from < 0 || k < from)) from = k;
    }
    if (from >= 0 && askedOn(l, from, name, border)) {
      e.line = i + 1;
      e.file = mainFile;
      return;
    }
  }
}

/** The line up to its first % that is not escaped (an odd number of backslashes before it). */
function uncommented(l: string): string {
  for (let k = l.indexOf("%"); k >= 0; k = l.indexOf("%", k + 1)) {
    // the backslashes walked over lie between two %: none is walked over twice
    let b = k;
    while (b > 0 && l.charCodeAt(b - 1) === 92) b--;
    if ((k - b) % 2 === 0) return l.slice(0, k);
  }
  return l;
}

/** Knuth-Morris-Pratt: border[q] is the longest proper border of the name's first q+1 characters. */
function prefixTable(name: string): Int32Array {
  const border = new Int32Array(name.length);
  for (let q = 1, k = 0; q < name.length; q++) {
    while (k > 0 && name.charCodeAt(q) !== name.charCodeAt(k)) k = border[k - 1]!;
    if (name.charCodeAt(q) === name.charCodeAt(k)) k++;
    border[q] = k;
  }
  return border;
}

/**
 * Whether `name` is one item of a braced list after `from` (the command): an occurrence
 * with only blanks between it and a "{" or "," before, and a "}" or "," after. The
 * occurrences come from one KMP pass; the nearest non-blank before and after each are
 * kept by two cursors that only move forward, so no character is looked at twice over.
 */
function askedOn(l: string, from: number, name: string, border: Int32Array): boolean {
  let before = -1; // the last non-blank in [from, seen)
  let seen = from;
  let after = -1; // the first non-blank at or after the previous occurrence's end (or l.length)
  for (let i = from, q = 0; i < l.length; i++) {
    const c = l.charCodeAt(i);
    while (q > 0 && c !== name.charCodeAt(q)) q = border[q - 1]!;
    if (c === name.charCodeAt(q)) q++;
    if (q < name.length) continue;
    q = border[q - 1]!;
    const k = i + 1 - name.length;
    const end = i + 1;
    for (; seen < k; seen++) if (!isSpace(l.charCodeAt(seen))) before = seen;
    if (after < end) for (after = end; after < l.length && isSpace(l.charCodeAt(after)); after++);
    const open = l[before];
    const shut = l[after];
    if ((open === "{" || open === ",") && (shut === "}" || shut === ",")) return true;
  }
  return false;
}

const TOOL_ERROR_STARTS = ["I couldn't", "I found no", "Illegal", "Sorry", "Index style file", "Can't ", "!! ", "Unknown option", "Warning: Couldn't", "Repeated entry"];

/** "..., line N" / "line = N" / "---line N of file F" in a tool's message. */
function toolPlace(l: string): { file?: string; line?: number } {
  const num = (from: number) => {
    let j = from;
    while (j < l.length && j < from + 10 && isDigit(l.charCodeAt(j))) j++;
    return j > from ? Number(l.slice(from, j)) : undefined;
  };
  const b = l.indexOf("---line ");
  if (b >= 0) {
    const line = num(b + "---line ".length);
    const of = l.indexOf(" of file ", b);
    return { line, file: of >= 0 ? l.slice(of + " of file ".length).trim().split(" ")[0] : undefined };
  }
  const f = l.indexOf("(file = ");
  if (f >= 0) {
    const comma = l.indexOf(",", f);
    const ln = l.indexOf("line = ", f);
    return { file: comma > f ? l.slice(f + "(file = ".length, comma) : undefined, line: ln >= 0 ? num(ln + "line = ".length) : undefined };
  }
  return {};
}

/** Errors in the output or log of bibtex, biber or makeindex. */
export function parseToolOutput(output: string): LogError[] {
  const lines = splitLines(output.length > 256 * 1024 ? output.slice(-256 * 1024) : output);
  const errs: LogError[] = [];
  for (let i = 0; i < lines.length && errs.length < MAX_ERRORS; i++) {
    const l = lines[i] ?? "";
    if (l.startsWith("ERROR - ")) {
      errs.push({ message: clip(l.slice("ERROR - ".length)) });
      continue;
    }
    if (TOOL_ERROR_STARTS.some((s) => l.startsWith(s)) || l.includes("---line ")) {
      const next = (lines[i + 1] ?? "").trim();
      // bibtex puts the place on the next line; makeindex the reason ("-- Extra `@' ...")
      const place = l.includes("---line ") ? toolPlace(l) : toolPlace(next);
      const detail = l.startsWith("!! ") && next.startsWith("-- ") ? ` ${next.slice(3)}` : "";
      const e: LogError = { message: clip(l.trim() + detail) };
      if (place.file) e.file = place.file;
      if (place.line !== undefined) e.line = place.line;
      if (l.startsWith("!! ")) Object.assign(e, toolPlace(l));
      errs.push(e);
    }
  }
  return errs;
}
