// Scans of the user's own text (main.tex, the log) that run on the server's only
// thread: plain index scans, each linear in the bytes it looks at and capped in
// how many it looks at, so no input can make one cost more than a few milliseconds.

/** The part of main.tex searched for the line that asked for a missing file. */
export const MAX_SOURCE_SCAN = 4 * 1024 * 1024;
/** The part of an error message searched for "File `x' not found". */
const MAX_MESSAGE_SCAN = 4096;
/** Longer names cannot be files (NAME_MAX). */
const MAX_NAME = 255;

const isWordChar = (c: number) => (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95;
const isSpace = (c: number) => c === 32 || c === 9 || c === 13 || c === 12 || c === 11;

/** The file named by TeX's "File `name.ext' not found", split into name and sty/cls kind. */
export function missingFileOf(message: string): { name: string; kind: "sty" | "cls" | undefined } | undefined {
  const msg = message.length > MAX_MESSAGE_SCAN ? message.slice(0, MAX_MESSAGE_SCAN) : message;
  const open = msg.indexOf("File `");
  if (open < 0) return undefined;
  const start = open + "File `".length;
  const close = msg.indexOf("' not found", start);
  if (close <= start) return undefined;
  const full = msg.slice(start, close);
  if (full.includes("'")) return undefined;
  for (const kind of ["sty", "cls"] as const) {
    if (full.length > kind.length + 1 && full.endsWith(`.${kind}`)) return { name: full.slice(0, -kind.length - 1), kind };
  }
  return { name: full, kind: undefined };
}

/** Index of the first `\cmd` in `line` (not followed by a letter, digit or _), or -1. */
function commandAt(line: string, cmd: string): number {
  const needle = `\\${cmd}`;
  for (let i = line.indexOf(needle); i >= 0; i = line.indexOf(needle, i + needle.length)) {
    const after = line.charCodeAt(i + needle.length);
    if (Number.isNaN(after) || !isWordChar(after)) return i;
  }
  return -1;
}

/**
 * True when `name` appears after `from` as a list item: `{` or `,`, spaces, name, spaces, `,` or `}`.
 * `name` has no space, brace or comma, so a match never overlaps the one before it and
 * every character is looked at a bounded number of times.
 */
function listItemAfter(line: string, name: string, from: number): boolean {
  for (let i = line.indexOf(name, from); i >= 0; i = line.indexOf(name, i + name.length)) {
    let b = i - 1;
    while (b >= from && isSpace(line.charCodeAt(b))) b--;
    const before = line.charCodeAt(b);
    if (b < from || (before !== 123 && before !== 44)) continue; // { ,
    let a = i + name.length;
    while (a < line.length && isSpace(line.charCodeAt(a))) a++;
    const after = line.charCodeAt(a);
    if (after === 125 || after === 44) return true; // } ,
  }
  return false;
}

/**
 * The 1-based line of main.tex whose `\usepackage`/`\RequirePackage` (sty),
 * `\documentclass` (cls) or `\input`/`\include`/… asked for `name`; only the first
 * MAX_SOURCE_SCAN bytes are searched. Each line is scanned a bounded number of times.
 */
export function requestingLine(source: string, name: string, kind: "sty" | "cls" | undefined): number | undefined {
  if (name === "" || name.length > MAX_NAME || /[\s{},]/.test(name)) return undefined;
  const cmds = kind === "cls" ? ["documentclass"] : kind === "sty" ? ["usepackage", "RequirePackage"] : ["input", "include", "usepackage", "documentclass"];
  const end = Math.min(source.length, MAX_SOURCE_SCAN);
  let lineNo = 0;
  for (let start = 0; start < end; ) {
    lineNo++;
    let stop = source.indexOf("\n", start);
    if (stop < 0 || stop > end) stop = end;
    const line = source.slice(start, stop);
    let first = -1;
    for (const c of cmds) {
      const at = commandAt(line, c);
      if (at >= 0 && (first < 0 || at < first)) first = at;
    }
    // the name must follow a command: searching from the earliest one finds any that does
    if (first >= 0 && listItemAfter(line, name, first + 1)) return lineNo;
    start = stop + 1;
  }
  return undefined;
}
