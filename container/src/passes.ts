// Deciding how many passes a document needs, and when bibtex/biber must run.
import { createHash } from "node:crypto";
import { promises as fs } from "node:fs";
import path from "node:path";
import { logAsksRerun } from "./log-parser.ts";
import { MAIN_BASENAME } from "./engine.ts";

/** Files LaTeX writes in one pass and reads in the next. */
const TRACKED = /\.(aux|toc|lof|lot|loa|lol|out|nav|snm|thm|bbl)$/;

export type Snapshot = Map<string, string>; // relative path -> sha1

async function walk(dir: string, rel: string, out: string[], depth: number): Promise<void> {
  if (depth > 8) return;
  let entries;
  try {
    entries = await fs.readdir(path.join(dir, rel), { withFileTypes: true });
  } catch {
    return;
  }
  for (const e of entries) {
    const r = rel ? `${rel}/${e.name}` : e.name;
    if (e.name.startsWith(".")) continue;
    if (e.isDirectory()) await walk(dir, r, out, depth + 1);
    else if (e.isFile() && TRACKED.test(e.name)) out.push(r);
  }
}

export async function snapshot(dir: string): Promise<Snapshot> {
  const files: string[] = [];
  await walk(dir, "", files, 0);
  const snap: Snapshot = new Map();
  await Promise.all(
    files.map(async (f) => {
      const data = await fs.readFile(path.join(dir, f)).catch(() => undefined);
      if (data && data.length > 0) snap.set(f, createHash("sha1").update(data).digest("hex"));
    }),
  );
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

export type BibTool = "bibtex" | "biber";

/** Citation input of bibtex: \citation, \bibdata and \bibstyle lines of all .aux files. */
export async function bibtexKey(dir: string): Promise<string | undefined> {
  const files: string[] = [];
  await walk(dir, "", files, 0);
  const lines: string[] = [];
  let hasData = false;
  for (const f of files.filter((x) => x.endsWith(".aux")).sort()) {
    const text = await fs.readFile(path.join(dir, f), "utf8").catch(() => "");
    for (const l of text.split("\n")) {
      if (/^\\(citation|bibdata|bibstyle)\{/.test(l)) lines.push(l);
      if (l.startsWith("\\bibdata{")) hasData = true;
    }
  }
  if (!hasData) return undefined;
  return createHash("sha1").update(lines.join("\n")).digest("hex");
}

export async function biberKey(dir: string): Promise<string | undefined> {
  const bcf = await fs.readFile(path.join(dir, `${MAIN_BASENAME}.bcf`)).catch(() => undefined);
  if (!bcf) return undefined;
  return createHash("sha1").update(bcf).digest("hex");
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

/** Data sources a .bcf names; biber only runs when all are plain files of the job. */
export async function biberSources(dir: string): Promise<{ ok: boolean; bad?: string }> {
  const bcf = await fs.readFile(path.join(dir, `${MAIN_BASENAME}.bcf`), "utf8").catch(() => "");
  const sources = bcfDatasources(bcf);
  if (!sources) return { ok: false, bad: `more than ${MAX_DATASOURCES} data sources` };
  const seen = new Set<string>();
  for (const { attrs, src } of sources) {
    if (seen.has(src)) continue;
    seen.add(src);
    if (!attrs.includes('type="file"') || src.includes("://") || src.startsWith("/") || src.split(/[\\/]/).includes("..")) {
      return { ok: false, bad: src };
    }
    const st = await fs.lstat(path.join(dir, src)).catch(() => undefined);
    if (!st || !st.isFile()) return { ok: false, bad: src };
  }
  return { ok: true };
}
