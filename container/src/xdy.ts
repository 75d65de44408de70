// xindy reads its style modules (`.xdy`) and, with `-I xindy`, its raw index (glossaries' `.glo`)
// with the Lisp reader and evaluates what it reads: a document that writes either could run any
// Lisp (`(ext:shell "...")`, `#.` read-time evaluation) without shell escape. Before xindy runs,
// every such file of the job is checked to be plain xindy data: top-level forms headed by one of
// xindy's own commands (the raw index: `indexentry` only), whose arguments are strings, numbers,
// keywords, symbols and lists of those, never another call; no reader macros. One linear pass per
// file, capped by the caller's read cap; the modules a style `require`s are checked the same way.

/** The commands of xindy's style language (its manual), except `searchpath`. */
const COMMANDS = new Set([
  "define-alphabet",
  "define-attributes",
  "define-crossref-class",
  "define-letter-group",
  "define-letter-groups",
  "define-location-class",
  "define-location-class-order",
  "define-rule-set",
  "define-sort-rule-orientations",
  "merge-rule",
  "merge-to",
  "require",
  "sort-rule",
  "use-rule-set",
  "markup-attribute-group",
  "markup-attribute-group-list",
  "markup-crossref",
  "markup-crossref-layer",
  "markup-crossref-layer-list",
  "markup-crossref-list",
  "markup-index",
  "markup-indexentry",
  "markup-indexentry-list",
  "markup-keyword",
  "markup-keyword-list",
  "markup-letter-group",
  "markup-letter-group-list",
  "markup-locclass",
  "markup-locclass-list",
  "markup-locref",
  "markup-locref-class",
  "markup-locref-layer",
  "markup-locref-layer-list",
  "markup-locref-list",
  "markup-range",
  "markup-trace",
]);

/**
 * How strings are read: xindy reads style modules with `\` as an ordinary character (a string ends
 * at the next `"`), and the raw index with the standard reader (`\` escapes the next character).
 */
export type XdyMode = "style" | "raw";

export interface XdyCheck {
  ok: boolean;
  reason?: string;
  /** The modules the file `require`s (style files only). */
  requires: string[];
}

const MAX_NESTING = 64;
const MAX_REQUIRES = 64;
/** Per ASCII code: 1 whitespace, 2 delimiter, 3 starts a reader macro, quote or escape outside a string. */
const CLASS = new Uint8Array(128);
for (const c of " \t\n\r\f") CLASS[c.charCodeAt(0)] = 1;
for (const c of '()";') CLASS[c.charCodeAt(0)] = 2;
for (const c of "#|'`,\\") CLASS[c.charCodeAt(0)] = 3;
const kind = (code: number) => (code < 128 ? CLASS[code]! : 0);

const clip = (s: string) => (s.length > 60 ? `${s.slice(0, 60)}...` : s);

/** Checks one file's text; see the module comment for what passes. */
export function checkXdy(text: string, mode: XdyMode): XdyCheck {
  const requires: string[] = [];
  const fail = (reason: string): XdyCheck => ({ ok: false, reason, requires });
  // per open list: how many elements it has so far, and whether it is a `require` form
  const lists: Array<{ n: number; require: boolean }> = [];
  let i = 0;
  const n = text.length;
  while (i < n) {
    const c = text[i]!;
    if (c === ";") {
      const end = text.indexOf("\n", i);
      i = end < 0 ? n : end + 1;
      continue;
    }
    if (kind(text.charCodeAt(i)) === 1) {
      i++;
      continue;
    }
    if (c === "(") {
      if (lists.length >= MAX_NESTING) return fail("lists nested too deeply");
      const top = lists[lists.length - 1];
      if (top) top.n++;
      lists.push({ n: 0, require: false });
      i++;
      continue;
    }
    if (c === ")") {
      if (!lists.pop()) return fail('an unmatched ")"');
      i++;
      continue;
    }
    if (kind(text.charCodeAt(i)) === 3) return fail(`"${c}" outside a string (a reader macro, quote or escape)`);
    const top = lists[lists.length - 1];
    if (!top) return fail("text outside a form");
    if (c === '"') {
      let j = i + 1;
      if (mode === "style") j = text.indexOf('"', j);
      else while (j < n && text[j] !== '"') j += text[j] === "\\" ? 2 : 1;
      if (j < 0 || j >= n) return fail("a string that never ends");
      // a list that starts with a string is data (a list of strings), never a call
      if (top.n > 0 && top.require) {
        const value = mode === "style" ? text.slice(i + 1, j) : text.slice(i + 1, j).replace(/\\(.)/gs, "$1");
        if (requires.length >= MAX_REQUIRES) return fail("too many required modules");
        if (!value.endsWith(".xdy") || value.startsWith("/") || value.split("/").includes("..")) return fail(`a required module that is not a .xdy file of the project or of xindy: ${clip(value)}`);
        requires.push(value);
      }
      top.n++;
      i = j + 1;
      continue;
    }
    let j = i;
    for (let k = kind(text.charCodeAt(j)); j < n && k !== 1 && k !== 2; k = kind(text.charCodeAt(++j))) {
      if (k === 3) return fail(`"${text[j]}" in ${clip(text.slice(i, j + 1))}`);
    }
    const atom = text.slice(i, j);
    if (atom.indexOf(":", 1) >= 0) return fail(`a symbol of another package: ${clip(atom)}`);
    if (top.n === 0 && !atom.startsWith(":") && !/^[-+]?[0-9]/.test(atom)) {
      const head = atom.toLowerCase();
      if (lists.length > 1) return fail(`a call inside a form: (${clip(atom)} ...)`);
      if (mode === "raw" ? head !== "indexentry" : !COMMANDS.has(head)) return fail(`(${clip(atom)} ...) is not ${mode === "raw" ? "an index entry" : "a xindy command"}`);
      top.require = head === "require";
    }
    top.n++;
    i = j;
  }
  if (lists.length) return fail("a form that never ends");
  return { ok: true, requires };
}

/** Modules checked per xindy run at most (the style, what it requires, and so on). */
const MAX_MODULES = 64;

/**
 * Checks what one xindy run would read of the job's: its raw index when read as Lisp (`-I
 * xindy`), its `-M` modules and every module they `require` that the job has (a module the job
 * does not have is one of xindy's own). `read` gives a regular file of the main file's folder
 * (never through a link), capped, or undefined. Undefined when all is plain data, else why not.
 */
export async function checkXindyRun(args: readonly string[], input: string, read: (rel: string) => Promise<Buffer | undefined>): Promise<string | undefined> {
  const markup = args[args.indexOf("-I") + 1];
  if (args.includes("-I") && markup === "xindy") {
    const raw = await read(input);
    if (raw) {
      const r = checkXdy(raw.toString("utf8"), "raw");
      if (!r.ok) return `${input}: ${r.reason}`;
    }
  }
  // a module named without its extension may be found by either name
  const pending = args.flatMap((a, i) => (args[i - 1] !== "-M" ? [] : a.endsWith(".xdy") ? [a] : [a, `${a}.xdy`]));
  const seen = new Set<string>();
  while (pending.length) {
    const m = pending.shift()!;
    if (seen.has(m)) continue;
    if (seen.size >= MAX_MODULES) return "too many xindy modules";
    seen.add(m);
    const data = await read(m);
    if (!data) continue;
    const r = checkXdy(data.toString("utf8"), "style");
    if (!r.ok) return `${m}: ${r.reason}`;
    pending.push(...r.requires);
  }
  return undefined;
}
