// Deciding how many passes a document needs, and which tools run between them
// (latexmk's rules): bibtex per .aux that asks for it, biber for the .bcf,
// makeindex per .idx (with the style the document or the project's latexmkrc
// names), xindy where imakeidx asks for it, splitindex for splitidx's single raw
// index, glossaries' .glo/.acn (as makeglossaries runs them, with makeindex or
// xindy) and nomencl's .nlo.
// Each tool runs only when its input changed since it last ran.
import { createHash } from "node:crypto";
import { linesWith, logAsksRerun, splitLines } from "./log-parser.ts";
import { readLatexmkrc } from "./latexmkrc.ts";
import { inFolder, WorkDir } from "./workdir.ts";
import { BIBER_GUARD, checkBcf } from "./bcf.ts";
import { checkXindyRun } from "./xdy.ts";

/**
 * Files LaTeX writes in one pass and reads in the next (and tools' outputs it reads). minted 3
 * (TeX Live 2024) highlights at the end of a pass and reads the result in the next: its
 * highlight and style files (named by their content's hash, so they settle).
 */
const TRACKED = /\.(aux|toc|lof|lot|loa|lol|out|nav|snm|thm|bbl|ind|gls|acr|nls)$|\.(highlight|style)\.minted$/;

export type Snapshot = Map<string, string>; // relative path -> sha1

/** The root of a job as the server reads it (a host path is opened as a WorkDir). */
export type JobRoot = WorkDir | string;
const workOf = (r: JobRoot) => (typeof r === "string" ? new WorkDir(r) : r);

/** Tracked files below folder `rel` (never through a link), at most MAX_DIR_ENTRIES looked at per folder. */
async function walk(work: WorkDir, rel: string, out: string[], depth: number): Promise<void> {
  if (depth > 8) return;
  for (const e of await work.list(rel, MAX_DIR_ENTRIES)) {
    const r = inFolder(rel, e.name);
    if (e.name.startsWith(".")) continue;
    if (e.isDirectory()) await walk(work, r, out, depth + 1);
    else if (e.isFile() && TRACKED.test(e.name)) out.push(r);
  }
}

/** A snapshot reads at most this much of each tracked file, and this many files, one at a time. */
const MAX_SNAPSHOT_FILE = 16 * 1024 * 1024;
const MAX_SNAPSHOT_FILES = 500;

export async function snapshot(root: JobRoot): Promise<Snapshot> {
  const work = workOf(root);
  const files: string[] = [];
  await walk(work, "", files, 0);
  const snap: Snapshot = new Map();
  // one file at a time: a job's many large files must not hold every libuv thread at once
  for (const f of files.slice(0, MAX_SNAPSHOT_FILES)) {
    const data = await work.readFile(f, MAX_SNAPSHOT_FILE);
    if (data && data.length > 0) snap.set(f, createHash("sha1").update(data).digest("hex"));
  }
  return snap;
}

function changed(a: Snapshot, b: Snapshot, filter: (f: string) => boolean): boolean {
  const keys = new Set([...a.keys(), ...b.keys()]);
  for (const k of keys) if (filter(k) && a.get(k) !== b.get(k)) return true;
  return false;
}

/**
 * Another pass is needed when a table-of-contents-like file changed (LaTeX never
 * warns about those), or when the log asks for a rerun and the .aux files did
 * change (so a rerun can make progress; this also stops endless "rerun" loops).
 */
export function needsRerun(before: Snapshot, after: Snapshot, log: string): boolean {
  const isAux = (f: string) => f.endsWith(".aux");
  const isOther = (f: string) => !isAux(f) && !f.endsWith(".bbl");
  if (changed(before, after, isOther)) return true;
  return logAsksRerun(log) && changed(before, after, isAux);
}

export type Tool = "bibtex" | "biber" | "makeindex" | "xindy" | "splitindex";

export interface ToolRun {
  tool: Tool;
  /** The program when it is not the tool's name (texindy for xindy). */
  program?: string;
  args: string[];
  /** What the run processes ("makeindex main.idx"); with `key`, decides whether it runs again. */
  id: string;
  /** Hash of the run's input and arguments. */
  key: string;
  /** The tool's own log, read for its errors. */
  logFile?: string;
}

/**
 * The command line of a run. makeindex applies openin_any to the path kpathsea
 * resolved, so paranoid mode refuses every style of the TeX tree (nomencl.ist);
 * it reads with "r" (no dot files) instead: in the sandbox it sees only the
 * system's read-only files and the job's own.
 */
export function toolCommand(t: ToolRun): [string, string[]] {
  return t.tool === "makeindex" ? ["env", ["openin_any=r", "makeindex", ...t.args]] : [t.program ?? t.tool, t.args];
}

export type ToolPlan = { ok: true; runs: ToolRun[] } | { ok: false; message: string; file?: string };

/** Tools' inputs are written by TeX from user input: read at most this much of each. */
const MAX_TOOL_INPUT = 16 * 1024 * 1024;
const MAX_DIR_ENTRIES = 2000;
const MAX_RUNS = 32;

const sha1 = (...parts: (string | Buffer)[]) => {
  const h = createHash("sha1");
  for (const p of parts) h.update(p).update("\0");
  return h.digest("hex");
};

/**
 * A file name a tool may be given (as an argument, never through a shell): relative, no "..", no
 * hidden or option-like start; spaces and letters beyond ASCII as project names have them.
 */
function safeName(n: string): boolean {
  if (n.length === 0 || n.length > 200 || n.startsWith("/") || n.startsWith("-")) return false;
  for (const seg of n.split("/")) {
    if (seg === "" || seg === "." || seg === ".." || seg.startsWith(".")) return false;
    for (let k = 0; k < seg.length; k++) {
      const c = seg.charCodeAt(k);
      const ok = (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95 || c === 46 || c === 43 || c === 45 || c === 32 || (c >= 0xa0 && !(c >= 0x202a && c <= 0x202e) && !(c >= 0x2066 && c <= 0x2069));
      if (!ok) return false;
    }
  }
  return true;
}

/** makeindex options a document may choose; everything else (output paths, -p) is dropped. */
const MAKEINDEX_FLAGS = new Set(["-c", "-g", "-l", "-r", "-L", "-T"]);

/** Whitelisted makeindex options out of a command line's words; `undefined` when the style name is unsafe. */
export function makeindexOptions(words: string[]): string[] | undefined {
  const out: string[] = [];
  for (let k = 0; k < words.length; k++) {
    const w = words[k] ?? "";
    if (w === "-s") {
      const style = words[++k] ?? "";
      if (!safeName(style)) return undefined;
      out.push("-s", style);
    } else if (MAKEINDEX_FLAGS.has(w)) out.push(w);
  }
  return out;
}

/** A language, code page or markup name for xindy ("english", "utf8", "din5007-utf8"). */
const XINDY_WORD = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;
const XINDY_FLAGS = new Set(["-g", "-l", "-r", "-q"]);
const XINDY_MARKUP = new Set(["latex", "xelatex", "omega", "xindy"]);

/**
 * xindy/texindy options a document may choose (language, code page, style modules,
 * input markup and the ordering flags); output and log paths are the server's.
 * `undefined` when a value is not allowed.
 */
export function xindyOptions(words: string[]): string[] | undefined {
  const out: string[] = [];
  for (let k = 0; k < words.length; k++) {
    const w = words[k] ?? "";
    if (w === "-L" || w === "-C" || w === "-M" || w === "-I") {
      const v = words[++k] ?? "";
      const ok = w === "-M" ? safeName(v) : w === "-I" ? XINDY_MARKUP.has(v) : XINDY_WORD.test(v);
      if (!ok) return undefined;
      out.push(w, v);
    } else if (XINDY_FLAGS.has(w)) out.push(w);
  }
  return out;
}

function words(s: string): string[] {
  return s.split(" ").filter((w) => w.length > 0);
}

const RUNSYSTEM = "runsystem(";
const REFUSED = ")...disabled (restricted).";

/** The program and options imakeidx asked for one index; options `undefined` when not allowed. */
export interface IndexCommand {
  program: "makeindex" | "texindy" | "xindy";
  options: string[] | undefined;
}

/**
 * imakeidx, without shell escape, ends the log with the command it wanted to run
 * for each index: "`makeindex -s book.ist main.idx'", "`texindy -L german main.idx'".
 * Returns index file -> command.
 */
export function imakeidxCommands(log: string): Map<string, IndexCommand> {
  const out = new Map<string, IndexCommand>();
  // only its lines are split out (a log of millions of short lines costs one search, see linesWith)
  const lines = linesWith(log, ["(imakeidx)", RUNSYSTEM]);
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i] ?? "";
    let cmd: string | undefined;
    if (l.startsWith("(imakeidx)")) {
      const a = l.indexOf("`");
      const b = a < 0 ? -1 : l.indexOf("'", a);
      if (b >= 0) cmd = l.slice(a + 1, b);
    } else if (l.startsWith(RUNSYSTEM) && l.endsWith(REFUSED)) {
      // with restricted shell escape imakeidx tries the command itself; the engine logs its refusal
      cmd = l.slice(RUNSYSTEM.length, -REFUSED.length);
    }
    if (cmd === undefined) continue;
    const w = words(cmd);
    const program = w[0];
    const idx = w[w.length - 1] ?? "";
    if (program !== "makeindex" && program !== "texindy" && program !== "xindy") continue;
    if (out.size >= MAX_RUNS || !idx.endsWith(".idx") || w.length < 2) continue;
    const opts = w.slice(1, -1);
    out.set(idx, { program, options: program === "makeindex" ? makeindexOptions(opts) : xindyOptions(opts) });
  }
  return out;
}

/** The makeindex options of a project's latexmkrc (`$makeindex = 'makeindex -s x.ist %O -o %D %S';`). */
export function latexmkrcOptions(rc: string): string[] | undefined {
  const w = readLatexmkrc(rc).makeindex;
  return w ? makeindexOptions(w) : [];
}

/** One run makeglossaries would make for a glossaries .aux. */
export interface GlossaryRun {
  tool: "makeindex" | "xindy";
  args: string[];
  input: string;
  log: string;
}

/** What a glossaries .aux asks makeglossaries to do (makeindex, or xindy with the `xindy` option). */
export function glossaryRuns(aux: string, base: string): GlossaryRun[] | { bad: string } {
  let ist: string | undefined;
  let letter = false;
  const lists: { type: string; log: string; out: string; in: string }[] = [];
  const language = new Map<string, string>();
  const codepage = new Map<string, string>();
  const arg = (l: string, cmd: string): string[] => {
    const out: string[] = [];
    let pos = cmd.length;
    while (l[pos] === "{" && out.length < 4) {
      const close = l.indexOf("}", pos);
      if (close < 0) break;
      out.push(l.slice(pos + 1, close));
      pos = close + 1;
    }
    return out;
  };
  for (const l of linesWith(aux, ["\\@istfilename{", "\\@glsorder{", "\\@xdylanguage{", "\\@gls@codepage{", "\\@newglossary{"])) {
    if (l.startsWith("\\@istfilename{")) ist = arg(l, "\\@istfilename")[0];
    else if (l.startsWith("\\@glsorder{")) letter = arg(l, "\\@glsorder")[0] === "letter";
    else if (l.startsWith("\\@xdylanguage{") && language.size < MAX_RUNS) {
      const [type, lang] = arg(l, "\\@xdylanguage");
      if (type !== undefined && lang !== undefined) language.set(type, lang);
    } else if (l.startsWith("\\@gls@codepage{") && codepage.size < MAX_RUNS) {
      const [type, cp] = arg(l, "\\@gls@codepage");
      if (type !== undefined && cp !== undefined) codepage.set(type, cp);
    } else if (l.startsWith("\\@newglossary{") && lists.length < MAX_RUNS) {
      const [type, log, out, input] = arg(l, "\\@newglossary");
      if (type !== undefined && log && out && input) lists.push({ type, log, out, in: input });
    }
  }
  if (ist === undefined || lists.length === 0) return [];
  if (!safeName(ist)) return { bad: `glossary style file name "${ist.slice(0, 100)}" is not allowed` };
  const xindy = ist.endsWith(".xdy");
  const runs: GlossaryRun[] = [];
  for (const g of lists) {
    const names = [g.log, g.out, g.in].map((e) => `${base}.${e}`);
    if (!names.every(safeName)) return { bad: `glossary file extension not allowed: ${g.in.slice(0, 100)}` };
    const [log, out, input] = names as [string, string, string];
    if (!xindy) {
      runs.push({ tool: "makeindex", args: ["-s", ist, ...(letter ? ["-l"] : []), "-t", log, "-o", out, input], input, log });
      continue;
    }
    // as makeglossaries runs xindy: the glossary's language and code page, the style as a module
    const lang = language.get(g.type);
    const cp = codepage.get(g.type);
    const opts = [...(lang ? ["-L", lang] : []), ...(cp ? ["-C", cp] : []), "-I", "xindy", "-M", ist.slice(0, -".xdy".length)];
    if (!xindyOptions(opts)) return { bad: `glossary language or code page not allowed: ${`${lang ?? ""} ${cp ?? ""}`.slice(0, 100)}` };
    runs.push({ tool: "xindy", args: [...opts, "-t", log, "-o", out, input], input, log });
  }
  return runs;
}

/**
 * glossaries-extra's `record` option: the glossaries are made by bib2gls, a Java
 * program this server does not have.
 */
export function needsBib2gls(aux: string): boolean {
  return aux.includes("\\glsxtr@resource{");
}

/** The lines of an .aux that bibtex reads. */
function bibLines(aux: string): { lines: string[]; data: boolean; cites: boolean } {
  const lines: string[] = [];
  let data = false;
  let cites = false;
  for (const l of linesWith(aux, ["\\citation{", "\\bibdata{", "\\bibstyle{"])) {
    if (l.startsWith("\\citation{")) cites = true;
    else if (l.startsWith("\\bibdata{")) data = true;
    else if (!l.startsWith("\\bibstyle{")) continue;
    lines.push(l);
  }
  return { lines, data, cites };
}

/** The job's name (TeX's \jobname: its files are `base.aux`, `base.bcf`, ...) and the project's makeindex options. */
export interface JobNames {
  base: string;
  /** The latexmkrc's makeindex options; undefined: its style is not a project file name. */
  makeindex: string[] | undefined;
}

/**
 * The tool runs the job needs after a successful pass, given what ran before
 * (`done`: id -> key of the input it processed). Bibliography tools only when
 * `bib` (the request brought a .bib file). `sub` is the main file's folder in the project ("" for the root).
 */
export async function planTools(root: JobRoot, log: string, done: Map<string, string>, bib: boolean, sub = "", job: JobNames = { base: "main", makeindex: [] }): Promise<ToolPlan> {
  const MAIN = job.base;
  const work = workOf(root);
  // a regular file of the main file's folder (never through a link), at most MAX_TOOL_INPUT bytes
  const read = (rel: string) => work.readFile(inFolder(sub, rel), MAX_TOOL_INPUT);
  const runs: ToolRun[] = [];
  const add = (r: ToolRun) => {
    if (done.get(r.id) !== r.key && runs.length < MAX_RUNS) runs.push(r);
  };
  const names = (await work.list(sub, MAX_DIR_ENTRIES)).map((e) => e.name).sort();

  if (bib) {
    const bcf = await read(`${MAIN}.bcf`);
    if (bcf) {
      const src = await biberSources(work, sub, MAIN);
      if (!src.ok) return { ok: false, message: `biber data source "${src.bad}" is not one of the request's files.`, file: `${MAIN}.bcf` };
      // biber evaluates parts of the .bcf as Perl: refuse what is not plain data, and run it under the guard
      const check = checkBcf(bcf);
      if (!check.ok) return { ok: false, message: `biber: ${check.reason}.`, file: `${MAIN}.bcf` };
      const args = ["-e", BIBER_GUARD, "--", "--noconf", "--nolog", MAIN];
      add({ tool: "biber", program: "perl", args, id: `biber ${MAIN}`, key: sha1(bcf) });
    } else {
      // bibtex per .aux that names a database and cites something (multibib, bibunits);
      // citations of \include'd chapters' .aux files count for every one of them
      const auxFiles: string[] = [];
      await walk(work, sub, auxFiles, 0);
      const parsed = new Map<string, ReturnType<typeof bibLines>>();
      const fromMain = auxFiles.map((f) => (sub ? f.slice(sub.length + 1) : f));
      for (const f of fromMain.filter((x) => x.endsWith(".aux")).slice(0, MAX_DIR_ENTRIES)) {
        const data = await read(f);
        if (data) parsed.set(f, bibLines(data.toString("utf8")));
      }
      const shared = [...parsed].filter(([, p]) => !p.data).flatMap(([f, p]) => [f, ...p.lines]);
      // (joined, not spread into arguments: an .aux can have millions of \citation lines)
      for (const [f, p] of parsed) {
        if (!p.data || !p.cites || f.includes("/")) continue;
        const base = f.slice(0, -".aux".length);
        if (!safeName(base)) continue;
        add({ tool: "bibtex", args: [base], id: `bibtex ${f}`, key: sha1(p.lines.join("\n"), shared.join("\n")), logFile: `${base}.blg` });
      }
    }
  }

  const imakeidx = imakeidxCommands(log);
  for (const n of names) {
    if (!n.endsWith(".idx") || !safeName(n)) continue;
    const data = await read(n);
    if (!data) continue;
    const base = n.slice(0, -".idx".length);
    if (isSplitIndex(data)) {
      // splitidx's one raw index of several indexes: splitindex writes a main-NAME.idx per
      // index (made in the plan's next round, see job.ts); makeindex still makes main.ind
      // of the entries without a name, which \printindex reads
      const args = ["-m", "", n];
      add({ tool: "splitindex", args, id: `splitindex ${n}`, key: sha1(data, ...args) });
    }
    const cmd = imakeidx.get(n);
    if (cmd && cmd.program !== "makeindex") {
      if (cmd.options === undefined) return { ok: false, message: `The xindy options for ${n} are not allowed (language, code page, style modules of the project only).`, file: n };
      const args = [...cmd.options, "-t", `${base}.ilg`, "-o", `${base}.ind`, n];
      const unsafe = await checkXindyRun(args, n, read);
      if (unsafe) return { ok: false, message: `xindy: ${unsafe}.`, file: n };
      add({ tool: "xindy", program: cmd.program, args, id: `xindy ${n}`, key: sha1(data, ...args), logFile: `${base}.ilg` });
      continue;
    }
    let opts = cmd?.options;
    if (!cmd) {
      opts = job.makeindex;
    }
    if (opts === undefined) return { ok: false, message: `The makeindex style for ${n} is not a file name of the project.`, file: n };
    const args = [...opts, "-t", `${base}.ilg`, n];
    add({ tool: "makeindex", args, id: `makeindex ${n}`, key: sha1(data, ...args), logFile: `${base}.ilg` });
  }

  const mainAux = await read(`${MAIN}.aux`);
  if (mainAux) {
    const aux = mainAux.toString("utf8");
    if (needsBib2gls(aux)) {
      return {
        ok: false,
        message: "This document needs bib2gls (the record option of glossaries-extra), which is not available on this server. Use glossaries without record (makeindex or xindy make the lists).",
        file: `${MAIN}.aux`,
      };
    }
    const g = glossaryRuns(aux, MAIN);
    if ("bad" in g) return { ok: false, message: g.bad, file: `${MAIN}.aux` };
    for (const r of g) {
      const data = await read(r.input);
      if (!data) continue;
      // xindy evaluates what it reads: only plain xindy data goes to it
      const unsafe = r.tool === "xindy" ? await checkXindyRun(r.args, r.input, read) : undefined;
      if (unsafe) return { ok: false, message: `xindy: ${unsafe}.`, file: r.input };
      add({ tool: r.tool, ...(r.tool === "xindy" ? { program: "xindy" } : {}), args: r.args, id: `${r.tool} ${r.input}`, key: sha1(data, ...r.args), logFile: r.log });
    }
  }

  const nlo = `${MAIN}.nlo`;
  const nloData = names.includes(nlo) ? await read(nlo) : undefined;
  if (nloData) {
    const args = ["-s", "nomencl.ist", "-t", `${MAIN}.nlg`, "-o", `${MAIN}.nls`, nlo];
    add({ tool: "makeindex", args, id: `makeindex ${nlo}`, key: sha1(nloData, ...args), logFile: `${MAIN}.nlg` });
  }
  return { ok: true, runs };
}

/** splitidx writes "\\indexentry[NAME]{...}" lines into one raw index (without its `split` option). */
function isSplitIndex(idx: Buffer): boolean {
  return idx.subarray(0, 13).toString("latin1") === "\\indexentry[" || idx.includes("\n\\indexentry[");
}

const DS_OPEN = "<bcf:datasource";
const DS_CLOSE = "</bcf:datasource>";
/** More data sources than any real bibliography has; beyond it the .bcf is refused. */
const MAX_DATASOURCES = 256;

/**
 * The `<bcf:datasource ATTRS>NAME</bcf:datasource>` elements of a .bcf, found
 * with indexOf in one left-to-right scan (a .bcf is written from user input).
 */
export function bcfDatasources(bcf: string): { attrs: string; src: string }[] | undefined {
  const out: { attrs: string; src: string }[] = [];
  let pos = 0;
  for (;;) {
    const s = bcf.indexOf(DS_OPEN, pos);
    if (s < 0) return out;
    const after = s + DS_OPEN.length;
    const c = bcf[after];
    if (c !== ">" && c !== " " && c !== "\t" && c !== "\n" && c !== "\r") {
      pos = after;
      continue;
    }
    const gt = bcf.indexOf(">", after);
    if (gt < 0) return out;
    const lt = bcf.indexOf("<", gt + 1);
    if (lt < 0) return out;
    // any other start before `lt` shares this `>` and this text: same outcome, skip them
    pos = lt;
    if (!bcf.startsWith(DS_CLOSE, lt)) continue;
    if (out.length >= MAX_DATASOURCES) return undefined;
    out.push({ attrs: bcf.slice(after, gt), src: bcf.slice(gt + 1, lt).trim() });
    pos = lt + DS_CLOSE.length;
  }
}

/**
 * Data sources a .bcf names; biber only runs when all are plain files of the job.
 * `sub` is the main file's folder (biber's working directory): a name is found from
 * it (also with "..", staying in the project), else from the project root (biber asks
 * kpsewhich, whose BIBINPUTS lists the root when the main file is in a subfolder; see
 * engineEnv). Names are resolved as strings and looked up through real folders only.
 */
export async function biberSources(root: JobRoot, sub = "", base = "main"): Promise<{ ok: boolean; bad?: string }> {
  const work = workOf(root);
  // read as the tools' inputs are (a regular file, capped): anything else is refused, not checked in part
  const data = await work.readFile(inFolder(sub, `${base}.bcf`), MAX_TOOL_INPUT);
  if (!data || data.length >= MAX_TOOL_INPUT) return { ok: false, bad: `${base}.bcf (not a regular file under ${MAX_TOOL_INPUT} bytes)` };
  const sources = bcfDatasources(data.toString("utf8"));
  if (!sources) return { ok: false, bad: `more than ${MAX_DATASOURCES} data sources` };
  const seen = new Set<string>();
  const isFile = async (rel: string | undefined) => rel !== undefined && (await work.fileSize(rel)) !== undefined;
  for (const { attrs, src } of sources) {
    if (seen.has(src)) continue;
    seen.add(src);
    if (!attrs.includes('type="file"') || src.includes("://") || src.startsWith("/") || src.includes("\\")) return { ok: false, bad: src };
    const found = (await isFile(inProject(sub, src))) || (!src.split("/").includes("..") && (await isFile(inProject("", src))));
    if (!found) return { ok: false, bad: src };
  }
  return { ok: true };
}

/** `rel` taken from folder `from` of the project, as a project path; undefined when it leaves the project. */
function inProject(from: string, rel: string): string | undefined {
  const out = from ? from.split("/") : [];
  for (const seg of rel.split("/")) {
    if (seg === "" || seg === ".") continue;
    if (seg === "..") {
      if (out.length === 0) return undefined;
      out.pop();
    } else out.push(seg);
  }
  return out.length ? out.join("/") : undefined;
}
