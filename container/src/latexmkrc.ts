// A project's latexmkrc, read and never executed. latexmk runs the file as Perl; here it is
// scanned once, left to right (strings, comments and brackets tracked, statements split at
// `;`), and only the settings projects commonly rely on are taken from it: the main file
// (`@default_files`), the engine (`$pdf_mode`, `$pdflatex = 'xelatex ...'`), input folders
// (`$ENV{'TEXINPUTS'}`, `ensure_path('TEXINPUTS', ...)`) and the makeindex style. Every other
// statement (`system(...)`, subroutines, `$out_dir`, custom dependencies, ...) is ignored and
// named in a warning. The scan is linear in the file, which is capped.

import type { Engine } from "./config.ts";
import { pathIssue } from "./names.ts";

/** The names latexmk reads from the folder it runs in, in its order. */
export const LATEXMKRC_NAMES = ["latexmkrc", ".latexmkrc"] as const;
/** Bytes of a latexmkrc that are read (real ones are a few hundred bytes). */
export const MAX_RC_BYTES = 64 * 1024;
/** Statements looked at; the rest is ignored (and said so). */
const MAX_STATEMENTS = 500;
/** Folders added to one search path. */
const MAX_FOLDERS = 16;

export interface Latexmkrc {
  /** The engine `$pdf_mode` (and the command it names) selects. */
  engine?: Engine;
  /** `@default_files`: the main file(s), relative to the folder of the latexmkrc. */
  defaultFiles: string[];
  /** Project folders to search, relative to the latexmkrc's folder (`//` suffix: with subfolders). */
  paths: { TEXINPUTS: string[]; BIBINPUTS: string[]; BSTINPUTS: string[] };
  /** `$makeindex`'s words after the program name (undefined: none set). */
  makeindex?: string[];
  /** What was ignored, one short description each. */
  ignored: string[];
}

const ENGINES_BY_MODE: Record<string, Engine | undefined> = { "1": "pdflatex", "4": "lualatex", "5": "xelatex" };
const COMMAND_VAR: Record<string, string> = { "1": "pdflatex", "4": "lualatex", "5": "xelatex" };
const ENGINE_NAMES: ReadonlySet<string> = new Set(["pdflatex", "xelatex", "lualatex"]);
/** Options of an engine command that change nothing here (the server sets its own). */
const HARMLESS_FLAGS = /^(?:%O|%S|%P|%B|-interaction=\w+|-synctex=-?\d|-file-line-error|-halt-on-error|-recorder|-8bit|-no-pdf|-pdf)$/;

/** Splits `text` into statements at `;` outside strings, brackets and comments. Linear. */
export function statements(text: string): string[] {
  const out: string[] = [];
  let cur = "";
  let depth = 0;
  let quote = "";
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quote) {
      cur += c;
      if (c === "\\" && quote === '"' && i + 1 < text.length) cur += text[++i];
      else if (c === quote) quote = "";
      continue;
    }
    if (c === "#") {
      // a comment, unless it is Perl's $#array
      if (text[i - 1] !== "$") {
        const eol = text.indexOf("\n", i);
        i = eol < 0 ? text.length : eol - 1;
        continue;
      }
    }
    if (c === "'" || c === '"') quote = c;
    else if (c === "(" || c === "{" || c === "[") depth++;
    else if ((c === ")" || c === "}" || c === "]") && depth > 0) depth--;
    if (c === ";" && depth === 0) {
      if (cur.trim()) out.push(cur.trim());
      cur = "";
      if (out.length >= MAX_STATEMENTS) return out;
      continue;
    }
    cur += c;
  }
  if (cur.trim()) out.push(cur.trim());
  return out;
}

/** The string literals of an expression, in order ('' and "" alike; no interpolation), except hash keys (`$ENV{'X'}`). */
function literals(expr: string): string[] {
  const out: string[] = [];
  let braces = 0;
  for (let i = 0; i < expr.length; i++) {
    const q = expr[i];
    if (q === "{") braces++;
    else if (q === "}" && braces > 0) braces--;
    if (q !== "'" && q !== '"') continue;
    let s = "";
    let j = i + 1;
    for (; j < expr.length && expr[j] !== q; j++) {
      if (expr[j] === "\\" && j + 1 < expr.length) j++;
      s += expr[j];
    }
    if (braces === 0) out.push(s);
    i = j;
  }
  return out;
}

/** Left side and right side of `lhs = rhs` (not `==`, `=~`, `.=` ...); undefined otherwise. */
function assignment(st: string): { lhs: string; rhs: string } | undefined {
  const eq = st.indexOf("=");
  if (eq <= 0 || st[eq + 1] === "=" || st[eq + 1] === "~") return undefined;
  const lhs = st.slice(0, eq).trim();
  if ("!<>.+-*/|&".includes(lhs[lhs.length - 1]!)) return undefined;
  return { lhs: lhs.replace(/\s+/g, ""), rhs: st.slice(eq + 1).trim() };
}

/** The search-path variable named by `$ENV{'X'}` / `$ENV{X}`, when it is one we honour. */
function envName(lhs: string): keyof Latexmkrc["paths"] | undefined {
  if (!lhs.startsWith("$ENV{") || !lhs.endsWith("}")) return undefined;
  const name = lhs.slice(5, -1).replace(/['"]/g, "");
  return name === "TEXINPUTS" || name === "BIBINPUTS" || name === "BSTINPUTS" ? name : undefined;
}

/**
 * A folder of a search path as the project gives it: relative (`./tex//`, `styles`), inside
 * the project once joined to the latexmkrc's folder (checked by the caller), no `:`.
 */
function folder(component: string): string | undefined {
  let f = component;
  const recursive = f.endsWith("//");
  while (f.endsWith("/")) f = f.slice(0, -1);
  while (f.startsWith("./")) f = f.slice(2);
  if (f === "" || f.startsWith("/") || f.startsWith("~") || f.includes("$")) return undefined;
  return recursive ? `${f}//` : f;
}

function short(st: string): string {
  const one = st.replace(/\s+/g, " ");
  return one.length > 60 ? `${one.slice(0, 57)}...` : one;
}

/** Reads a latexmkrc (at most MAX_RC_BYTES of it: pass a longer file's start, and `cut`). */
export function readLatexmkrc(input: string, cut = false): Latexmkrc {
  const text = input.length > MAX_RC_BYTES ? input.slice(0, MAX_RC_BYTES) : input;
  const rc: Latexmkrc = { defaultFiles: [], paths: { TEXINPUTS: [], BIBINPUTS: [], BSTINPUTS: [] }, ignored: [] };
  if (cut || text.length < input.length) rc.ignored.push(`everything after the first ${MAX_RC_BYTES} bytes`);
  let mode: string | undefined;
  const commands = new Map<string, string>();
  const addPath = (name: keyof Latexmkrc["paths"], values: string[]) => {
    for (const v of values)
      for (const c of v.split(":")) {
        const t = c.trim();
        if (t === "" || t === "." || t === "./") continue; // the current folder: searched anyway
        const f = folder(t);
        if (f === undefined) {
          if (rc.ignored.length < MAX_STATEMENTS) rc.ignored.push(`the ${name} folder ${t.slice(0, 60)} (not a folder of the project)`);
        }
        else if (rc.paths[name].length < MAX_FOLDERS && !rc.paths[name].includes(f)) rc.paths[name].push(f);
      }
  };
  const list = statements(text);
  if (list.length >= MAX_STATEMENTS) rc.ignored.push(`statements after the first ${MAX_STATEMENTS}`);
  for (const st of list) {
    const a = assignment(st);
    if (st.startsWith("ensure_path(") || st.startsWith("ensure_path (")) {
      const [name, ...values] = literals(st);
      if (name === "TEXINPUTS" || name === "BIBINPUTS" || name === "BSTINPUTS") addPath(name, values);
      else rc.ignored.push(short(st));
    } else if (a && a.lhs === "@default_files") {
      rc.defaultFiles = literals(a.rhs).slice(0, MAX_FOLDERS);
    } else if (a && a.lhs === "$pdf_mode" && /^\d$/.test(a.rhs)) {
      mode = a.rhs;
      if (!ENGINES_BY_MODE[a.rhs]) rc.ignored.push(`${short(st)} (only PDF output: 1, 4 or 5)`);
    } else if (a && /^\$(pdflatex|xelatex|lualatex)$/.test(a.lhs)) {
      const cmd = literals(a.rhs)[0] ?? "";
      commands.set(a.lhs.slice(1), cmd);
      const extra = cmd.split(/\s+/).slice(1).filter((w) => w && !HARMLESS_FLAGS.test(w));
      if (extra.length) rc.ignored.push(`the options ${extra.join(" ").slice(0, 60)} of $${a.lhs.slice(1)}`);
    } else if (a && a.lhs === "$makeindex") {
      const w = (literals(a.rhs)[0] ?? "").split(/\s+/).filter((x) => x);
      if (w[0] === "makeindex") rc.makeindex = w.slice(1);
      else rc.ignored.push(short(st));
    } else if (a && envName(a.lhs)) {
      addPath(envName(a.lhs)!, literals(a.rhs));
    } else rc.ignored.push(short(st));
  }
  // the command of the chosen mode: `$pdflatex = 'xelatex %O %S'` makes pdf_mode 1 run xelatex
  const chosen = mode ?? (commands.size > 0 ? "1" : undefined);
  if (chosen && ENGINES_BY_MODE[chosen]) {
    const word = (commands.get(COMMAND_VAR[chosen]!) ?? "").trim().split(/\s+/)[0] ?? "";
    rc.engine = ENGINE_NAMES.has(word) ? (word as Engine) : ENGINES_BY_MODE[chosen];
  }
  return rc;
}

/** `rel` (a path relative to folder `dir` of the project) as a project path, or undefined when it leaves the project. */
export function inProject(dir: string, rel: string): string | undefined {
  const parts = dir ? dir.split("/") : [];
  for (const seg of rel.split("/")) {
    if (seg === "" || seg === ".") continue;
    if (seg === "..") {
      if (parts.length === 0) return undefined;
      parts.pop();
    } else parts.push(seg);
  }
  const p = parts.join("/");
  return p === "" || pathIssue(p) === undefined ? p : undefined;
}
