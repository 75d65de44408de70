// Which preambles are never dumped into a format (preamble.ts): those that write (their
// output would happen once, at dump time), change how the main file is read, drive the dump,
// or could do any of that under another spelling. A refusal only costs speed (the document
// compiles the normal way), so anything that might hide a refused primitive is refused too:
// names built at run time (\csname, etoolbox's \csuse, LaTeX's \@nameuse and \UseName, an
// environment, which \begin and \end call by name), characters read as other characters
// (^^ notation) or as other categories (\catcode, expl3 syntax), text read again as code
// (\scantokens).
//
// One linear scan of the text, jumping from backslash to backslash: it runs on the server's
// only thread for every request with a namespace.

/** A control word whose name contains one of these is refused (\protected@write, \write18, \ifcsname). */
const CONTAINS = [
  "write",
  "immediate",
  "openout",
  "special",
  "everyjob",
  "dump",
  "catcode",
  "endinput",
  "directlua",
  "luaexec",
  "luadirect",
  "latelua",
  "pdfobj",
  "pdfannot",
  "pdfcatalog",
  "pdfinfo",
  "makeglossaries",
  "filecontents",
  "csname",
  "scantokens",
  "scantextokens",
  "ExplSyntax",
  "ProvidesExpl",
  "UseName",
  "UseExpandableName",
  "ExpandArgs",
];

/** A control word whose name begins with one of these builds another's name (\csuse, \csdef, \ifcsdef, \letcs, \@namedef). */
const PREFIXES = ["cs", "ifcs", "letcs", "@name"];

/** Longest environment name looked at after \begin or \end. */
const MAX_ENV_NAME = 128;

/**
 * Characters scanned as part of a control word's name: TeX's letters and then some (@ in
 * packages, _ and : in expl3, digits). Reading more characters than TeX would only makes a
 * name longer, so every name TeX reads is the start of one scanned here: a word it contains
 * is found either way.
 */
function nameChar(c: number): boolean {
  return (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || (c >= 48 && c <= 58) || c === 64 || c === 95; // A-Z a-z 0-9 : @ _
}

/** The refused word in `name`, if any. */
function refusedName(name: string): string | undefined {
  for (const p of PREFIXES) if (name.startsWith(p)) return p;
  for (const w of CONTAINS) if (name.includes(w)) return w;
  return undefined;
}

interface Next {
  word: string;
  /** Its next occurrence in the text (-1: none left). */
  at: number;
}

/**
 * Whether the name at [from, to) contains one of the CONTAINS words found in the text, without
 * a string of its own: names come in order, and each word's occurrences are walked through
 * once (indexOf from the last one), so all the names of a text cost one pass per word found.
 */
function wordWithin(text: string, next: Next[], from: number, to: number): string | undefined {
  for (const n of next) {
    while (n.at >= 0 && n.at < from) n.at = text.indexOf(n.word, n.at + 1);
    if (n.at >= 0 && n.at + n.word.length <= to) return n.word;
  }
  return undefined;
}

/** A name beginning at `at` starts with one of PREFIXES. */
function prefixAt(text: string, at: number): boolean {
  const c = text.charCodeAt(at);
  if (c !== 99 && c !== 105 && c !== 108 && c !== 64) return false; // c i l @
  return PREFIXES.some((p) => text.startsWith(p, at));
}

/** Why `text` (a preamble, or a file it reads) may not be dumped; undefined when it may. */
export function refusal(text: string): string | undefined {
  if (text.includes("^^")) return "^^ notation";
  if (text.includes("filecontents")) return "filecontents";
  const next: Next[] = [];
  for (const word of CONTAINS) {
    const at = text.indexOf(word);
    if (at >= 0) next.push({ word, at });
  }
  const n = text.length;
  for (let i = 0; i < n; i++) {
    if (text.charCodeAt(i) !== 92) continue; // a backslash
    let j = i + 1;
    while (j < n && nameChar(text.charCodeAt(j))) j++;
    if (j === i + 1) {
      i++; // a control symbol (\\, \%, \{): its character is no escape
      continue;
    }
    if (wordWithin(text, next, i + 1, j) !== undefined || prefixAt(text, i + 1)) return `\\${text.slice(i + 1, Math.min(j, i + 65))}`;
    const begin = j - i === 6 && text.startsWith("begin", i + 1);
    const end = j - i === 4 && text.startsWith("end", i + 1);
    i = j - 1;
    if (!begin && !end) continue;
    // \begin{x} runs \x and \end{x} runs \endx: the environment's name is a control word's
    const cmd = begin ? "\\begin" : "\\end";
    let k = j;
    while (k < n && (text[k] === " " || text[k] === "\n" || text[k] === "\t" || text[k] === "\r")) k++;
    if (text[k] !== "{") return `${cmd} without a braced name`;
    // the name is looked for within MAX_ENV_NAME characters only: the scan stays linear
    let close = k + 1;
    while (close < n && close - k <= MAX_ENV_NAME && text[close] !== "}" && text[close] !== "\\" && text[close] !== "{") close++;
    if (text[close] !== "}") return `${cmd} with a computed name`;
    const env = text.slice(k + 1, close);
    if (refusedName(end ? `end${env}` : env)) return `${cmd}{${env}}`;
    i = close;
  }
  return undefined;
}
