// biber's control file (main.bcf) is written by TeX from the document, or uploaded as
// is: hostile. biber evaluates parts of it as Perl: a sourcemap step's `replace` is
// the body of a double-quoted string under s///ee (Biber::Utils::ireplace), a sorting
// `locale` and a data source's `type`/`datatype` are pasted into `eval` strings
// (Biber::sort_list, "require Biber::Input::$type::$datatype"). This check passes
// only values that evaluate to themselves (text, $1-style captures, backslash
// escapes); biber-guard.pl checks the same at each evaluation inside biber.
//
// One left-to-right scan with indexOf, over the text as biber reads it (UTF-8, else
// latin1, then NFD: NFD turns "≮" into "<"); XML entities are decoded as libxml does,
// and names compared without their prefix (biber strips namespaces). Anything this
// scanner cannot follow is refused: biber would refuse it as malformed anyway.
import { isAscii, isUtf8 } from "node:buffer";
import { readFileSync } from "node:fs";

/** biber-guard.pl's source: biber runs as `perl -e BIBER_GUARD -- ARGS` (nothing to bind into the sandbox). */
export const BIBER_GUARD = readFileSync(new URL("./biber-guard.pl", import.meta.url), "utf8");

/** More than any real control file (a few hundred KiB with thousands of citations and sourcemaps). */
export const MAX_BCF_BYTES = 2 * 1024 * 1024;

export type BcfCheck = { ok: true } | { ok: false; reason: string };

/** The options biblatex writes for biber (biblatex.sty's "BIBER OPTIONS"); others could redirect it. */
const BIBER_OPTIONS = new Set(["output_encoding", "input_encoding", "debug", "mincrossrefs", "minxrefs", "sortcase", "sortupper"]);
const MATCH_ATTRS = new Set(["map_match", "map_matchi", "map_notmatch", "map_notmatchi"]);
const DATATYPES = new Set(["bibtex", "biblatexml"]);
/** Backslash + letter escapes of a Perl string that are plain text (\n, \t) or case changes (\L...\E). */
const LETTER_ESCAPES = "ntLUEQFul";
/** Substituted by biber before the evaluation (see biber-guard.pl, which checks the result). */
const MAP_TOKENS = ["MAPLOOP", "MAPUNIQVAL", "MAPUNIQ"];
const ENTITIES: Record<string, string> = { lt: "<", gt: ">", amp: "&", quot: '"', apos: "'" };
/** Attributes whose values are checked (attrProblem) or read (component): only these are decoded. */
const READ_ATTRS = new Set(["map_replace", ...MATCH_ATTRS, "locale", "type", "datatype", "component"]);
const MAX_TEXT = 4096;

const isDigit = (c: string | undefined) => c !== undefined && c >= "0" && c <= "9";
const isAlnum = (c: string) => isDigit(c) || (c >= "A" && c <= "Z") || (c >= "a" && c <= "z");
const isControl = (c: string) => c < " " || c === "\x7f";
const isSpace = (c: string | undefined) => c === " " || c === "\t" || c === "\n" || c === "\r";
const clip = (s: string) => (s.length > 80 ? `${s.slice(0, 80)}...` : s);
const localName = (n: string) => n.slice(n.lastIndexOf(":") + 1);

/**
 * Why a sourcemap replacement is not plain text for Perl's "...", or undefined when it is:
 * characters other than \ $ @ "; \ before punctuation or one of LETTER_ESCAPES; $N or ${N}
 * not followed by a subscript ([, {, ->), which Perl would evaluate.
 */
export function replacementProblem(r: string): string | undefined {
  for (let i = 0; i < r.length; ) {
    const c = r[i] ?? "";
    if (isControl(c)) return "a control character";
    if (c === '"' || c === "@") return `"${c}" (write \\${c})`;
    if (c === "\\") {
      const n = r[i + 1];
      if (n === undefined || isControl(n) || (isAlnum(n) && !LETTER_ESCAPES.includes(n))) return `the escape "\\${n ?? ""}"`;
      i += 2;
      continue;
    }
    if (c !== "$") {
      i++;
      continue;
    }
    const token = MAP_TOKENS.find((t) => r.startsWith(t, i + 1));
    if (token) {
      i += 1 + token.length;
      continue;
    }
    let j = i + 1;
    const braced = r[j] === "{";
    if (braced) j++;
    if (!isDigit(r[j]) || r[j] === "0") return '"$" other than $1, $2, ... (write \\$)';
    while (isDigit(r[j])) j++;
    if (braced) {
      if (r[j] !== "}") return '"${" other than ${1}, ${2}, ...';
      j++;
    } else if (r[j] === "[" || r[j] === "{" || r.startsWith("->", j)) return `"${r.slice(i, j + 1)}" (Perl evaluates a subscript: write \${N} or a space)`;
    i = j;
  }
  return undefined;
}

/** Regex constructs that run code (refused by Perl at run time anyway; checked all the same). */
function matchProblem(m: string): string | undefined {
  for (const code of ["(?{", "(??{", "(*{"]) if (m.includes(code)) return `a code block "${code}"`;
  return undefined;
}

function safeWord(v: string, max: number): boolean {
  if (v.length > max) return false;
  for (const c of v) if (!(isAlnum(c) || c === "_" || c === "-" || c === ".")) return false;
  return true;
}

/** Text with XML's entities decoded; `undefined` on any other entity (a DTD's, which we refuse). */
function decode(s: string): string | undefined {
  let amp = s.indexOf("&");
  if (amp < 0) return s;
  let out = "";
  let from = 0;
  while (amp >= 0) {
    const semi = s.indexOf(";", amp);
    if (semi < 0 || semi - amp > 12) return undefined;
    const name = s.slice(amp + 1, semi);
    let ch = ENTITIES[name];
    if (ch === undefined && name.startsWith("#")) {
      const hex = name[1] === "x";
      const digits = name.slice(hex ? 2 : 1);
      const code = digits.length > 0 && /^[0-9a-fA-F]+$/.test(digits) ? Number.parseInt(digits, hex ? 16 : 10) : Number.NaN;
      if (!hex && !/^[0-9]+$/.test(digits)) return undefined;
      if (!(code > 0 && code <= 0x10ffff)) return undefined;
      ch = String.fromCodePoint(code);
    }
    if (ch === undefined) return undefined;
    out += s.slice(from, amp) + ch;
    from = semi + 1;
    amp = s.indexOf("&", from);
  }
  return out + s.slice(from);
}

/** The text as biber reads it: UTF-8 if it is valid UTF-8, else latin1; then NFD. */
function asBiberReads(buf: Buffer): string {
  if (isAscii(buf)) return buf.toString("latin1"); // NFD changes no ASCII
  return (isUtf8(buf) ? buf.toString("utf8") : buf.toString("latin1")).normalize("NFD");
}

interface Attr {
  name: string;
  value: string;
}

/** Checks one attribute; the element's local name gives data sources their rules. */
function attrProblem(element: string, a: Attr): string | undefined {
  const n = localName(a.name);
  if (n === "map_replace") {
    const p = replacementProblem(a.value);
    return p && `the sourcemap replacement "${clip(a.value)}" contains ${p}; a replacement may hold text, $1...$9 and backslash escapes only`;
  }
  if (MATCH_ATTRS.has(n)) {
    const p = matchProblem(a.value);
    return p && `the sourcemap match "${clip(a.value)}" contains ${p}`;
  }
  if (n === "locale" && !safeWord(a.value, 64)) return `the sorting locale "${clip(a.value)}" is not a locale name`;
  if (element === "datasource" && n === "type" && a.value !== "file") return `data source type "${clip(a.value)}" is not allowed (files only)`;
  if (element === "datasource" && n === "datatype" && !DATATYPES.has(a.value)) return `data source datatype "${clip(a.value)}" is not allowed (bibtex, biblatexml)`;
  return undefined;
}

/** State of a <options component="biber"> element: its option's key and values. */
interface BiberOptions {
  depth: number;
  text: string | undefined; // collecting the text of a <key> or <value>
  key: string | undefined;
  values: string[];
}

export function checkBcf(buf: Buffer): BcfCheck {
  if (buf.length > MAX_BCF_BYTES) return { ok: false, reason: `main.bcf is larger than ${MAX_BCF_BYTES / 1024 / 1024} MiB` };
  const s = asBiberReads(buf);
  const bad = (reason: string): BcfCheck => ({ ok: false, reason });
  const malformed = bad("main.bcf is not well-formed XML");
  let depth = 0;
  let opts: BiberOptions | undefined;
  let pos = 0;
  const addText = (t: string): boolean => {
    if (!opts || opts.text === undefined) return true;
    opts.text += t;
    return opts.text.length <= MAX_TEXT;
  };
  for (;;) {
    const lt = s.indexOf("<", pos);
    const raw = s.slice(pos, lt < 0 ? s.length : lt);
    if (opts?.text !== undefined) {
      const t = decode(raw);
      if (t === undefined || !addText(t)) return malformed;
    } else if (raw.includes("&") && decode(raw) === undefined) return bad("main.bcf uses an entity other than XML's own");
    if (lt < 0) break;
    if (s.startsWith("<!--", lt)) {
      const end = s.indexOf("-->", lt + 4);
      if (end < 0) return malformed;
      pos = end + 3;
    } else if (s.startsWith("<![CDATA[", lt)) {
      const end = s.indexOf("]]>", lt + 9);
      if (end < 0 || !addText(s.slice(lt + 9, end))) return malformed;
      pos = end + 3;
    } else if (s.startsWith("<!", lt)) {
      return bad("main.bcf has a document type declaration");
    } else if (s.startsWith("<?", lt)) {
      const end = s.indexOf("?>", lt + 2);
      if (end < 0) return malformed;
      pos = end + 2;
    } else if (s[lt + 1] === "/") {
      const gt = s.indexOf(">", lt);
      if (gt < 0) return malformed;
      const name = localName(s.slice(lt + 2, gt).trim());
      depth--;
      if (opts) {
        if (depth === opts.depth) opts = undefined;
        else if (name === "key" || name === "value") {
          if (name === "key") opts.key = opts.text;
          else opts.values.push(opts.text ?? "");
          opts.text = undefined;
        } else if (name === "option") {
          const p = biberOptionProblem(opts.key, opts.values);
          if (p) return bad(p);
          opts.key = undefined;
          opts.values = [];
        }
      }
      pos = gt + 1;
    } else {
      const tag = parseTag(s, lt);
      if (!tag) return malformed;
      const element = localName(tag.name);
      for (const a of tag.attrs) {
        const p = attrProblem(element, a);
        if (p) return bad(p);
      }
      if (opts) {
        if (element !== "option" && element !== "key" && element !== "value") return bad(`biber options may not contain <${clip(tag.name)}>`);
        if (element === "key" || element === "value") opts.text = tag.selfClosing ? undefined : "";
        if (tag.selfClosing && element === "value") opts.values.push("");
      } else if (element === "options" && !tag.selfClosing && tag.attrs.some((a) => localName(a.name) === "component" && a.value === "biber")) {
        opts = { depth, text: undefined, key: undefined, values: [] };
      }
      if (!tag.selfClosing) depth++;
      pos = tag.end;
    }
  }
  return { ok: true };
}

function biberOptionProblem(key: string | undefined, values: string[]): string | undefined {
  const k = (key ?? "").trim();
  if (!BIBER_OPTIONS.has(k)) return `the biber option "${clip(k)}" is not one biblatex sets`;
  for (const v of values) if (!safeWord(v.trim(), 64)) return `the biber option ${k} has the value "${clip(v)}"`;
  return undefined;
}

/** A start tag at `lt`: its name, decoded attributes, and the index after its ">". */
function parseTag(s: string, lt: number): { name: string; attrs: Attr[]; selfClosing: boolean; end: number } | undefined {
  let i = lt + 1;
  const nameStart = i;
  while (i < s.length && !isSpace(s[i]) && s[i] !== ">" && s[i] !== "/") i++;
  const name = s.slice(nameStart, i);
  if (name.length === 0) return undefined;
  // no "<" may come before the tag's end (not even in a value): found once, so the scan stays linear
  const next = s.indexOf("<", lt + 1);
  const limit = next < 0 ? s.length : next;
  const attrs: Attr[] = [];
  for (;;) {
    while (isSpace(s[i])) i++;
    const c = s[i];
    if (c === undefined) return undefined;
    if (c === ">") return { name, attrs, selfClosing: false, end: i + 1 };
    if (c === "/") return s[i + 1] === ">" ? { name, attrs, selfClosing: true, end: i + 2 } : undefined;
    const eq = s.indexOf("=", i);
    if (eq < 0) return undefined;
    const attrName = s.slice(i, eq).trim();
    if (attrName.length === 0 || attrName.length > 200 || attrName.includes("<") || attrName.includes(">")) return undefined;
    i = eq + 1;
    while (isSpace(s[i])) i++;
    const q = s[i];
    if (q !== '"' && q !== "'") return undefined;
    const close = s.indexOf(q, i + 1);
    if (close < 0) return undefined;
    if (close > limit) return undefined;
    if (READ_ATTRS.has(localName(attrName))) {
      // libxml normalises whitespace characters in attribute values to spaces
      const value = decode(s.slice(i + 1, close).replace(/[\t\n\r]/g, " "));
      if (value === undefined) return undefined;
      attrs.push({ name: attrName, value });
    }
    i = close + 1;
  }
}
