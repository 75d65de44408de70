// The corpus (container/test/corpus/*/main.tex and its project files, written for
// this project): every document must give the same outcome (PDF or error) and the
// same page count through the compile server as the bare engine on this machine,
// run outside the sandbox with a latexmk-like sequence computed here: engine
// passes, and between them biber/bibtex, makeindex (xindy when imakeidx asks for it,
// splitindex for splitidx), makeglossaries and nomencl's makeindex whenever their
// input changed, until the .aux-like files are stable.
// The engine comes from the document's "% !TEX program = ..." line (else pdflatex).
// CORPUS_ONLY=text runs only the documents whose folder name contains it.
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningServer } from "../src/server.ts";
import { compile, testServer } from "./helpers.ts";

const CORPUS = path.join(path.dirname(fileURLToPath(import.meta.url)), "corpus");
type Engine = "pdflatex" | "xelatex" | "lualatex";

interface Doc {
  name: string;
  engine: Engine;
  source: string;
  files: { path: string; content: string; encoding: "utf8" | "base64" }[];
}

function listFiles(dir: string, rel = ""): string[] {
  return readdirSync(path.join(dir, rel)).flatMap((n) => {
    const r = rel ? `${rel}/${n}` : n;
    return statSync(path.join(dir, r)).isDirectory() ? listFiles(dir, r) : [r];
  });
}

function loadDoc(name: string): Doc {
  const dir = path.join(CORPUS, name);
  const source = readFileSync(path.join(dir, "main.tex"), "utf8");
  const program = /^% !TEX program = (\w+)/.exec(source)?.[1] ?? "pdflatex";
  const files = listFiles(dir)
    .filter((f) => f !== "main.tex")
    .map((f) => {
      const data = readFileSync(path.join(dir, f));
      const text = /\.(tex|sty|cls|bib|dat|csv|ist|bst|txt)$/.test(f);
      return { path: f, content: text ? data.toString("utf8") : data.toString("base64"), encoding: text ? ("utf8" as const) : ("base64" as const) };
    });
  return { name, engine: program as Engine, source, files };
}

interface Outcome {
  ok: boolean;
  pages?: number;
  detail?: string;
}

function run(cmd: string, args: string[], cwd: string): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile(cmd, args, { cwd, timeout: 120_000, maxBuffer: 16 * 1024 * 1024, env: { ...process.env, max_print_line: "10000" } }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as { code?: unknown }).code === "number" ? ((err as { code: number }).code) : 1) : 0;
      resolve({ code, out: `${stdout}${stderr}` });
    });
  });
}

const hash = (file: string) => (existsSync(file) ? createHash("sha1").update(readFileSync(file)).digest("hex") : "");
const AUXLIKE = /\.(aux|toc|lof|lot|out|nav|snm|bbl|ind|gls|acr|nls)$/;

/** The bare engine with a latexmk-like sequence of passes and tools. */
async function bare(doc: Doc): Promise<Outcome> {
  const dir = mkdtempSync(path.join(tmpdir(), "corpus-"));
  try {
    cpSync(path.join(CORPUS, doc.name), dir, { recursive: true });
    const toolDone = new Map<string, string>();
    const tool = async (id: string, input: string, cmd: string, args: string[]): Promise<boolean> => {
      const h = hash(path.join(dir, input));
      if (!h || toolDone.get(id) === h) return false;
      toolDone.set(id, h);
      await run(cmd, args, dir);
      return true;
    };
    let before = "";
    for (let pass = 1; pass <= 5; pass++) {
      const r = await run(doc.engine, ["-interaction=batchmode", "-halt-on-error", "-file-line-error", "-no-shell-escape", "main.tex"], dir);
      if (r.code !== 0) return { ok: false, detail: `pass ${pass} exit ${r.code}` };
      const top = readdirSync(dir);
      let ran = false;
      if (top.includes("main.bcf")) ran = (await tool("biber", "main.bcf", "biber", ["main"])) || ran;
      else
        for (const aux of top.filter((f) => f.endsWith(".aux"))) {
          const text = readFileSync(path.join(dir, aux), "utf8");
          if (text.includes("\\bibdata{") && text.includes("\\citation{")) ran = (await tool(`bibtex ${aux}`, aux, "bibtex", [aux.slice(0, -4)])) || ran;
        }
      const log1 = readFileSync(path.join(dir, "main.log"), "latin1");
      for (const idx of top.filter((f) => f.endsWith(".idx"))) {
        // imakeidx names the xindy command it wants in the log; splitidx's raw index goes through splitindex
        const xindy = new RegExp(`\\(imakeidx\\) +\`((?:tex)?xindy)((?: [^' \\n]+)*) ${idx.replace(".", "\\.")}'`).exec(log1);
        if (xindy) ran = (await tool(idx, idx, xindy[1]!, [...xindy[2]!.split(" ").filter(Boolean), idx])) || ran;
        else ran = (await tool(idx, idx, "makeindex", [idx])) || ran;
        if (readFileSync(path.join(dir, idx), "latin1").includes("\\indexentry[")) ran = (await tool(`split ${idx}`, idx, "splitindex", [idx])) || ran;
      }
      if (top.includes("main.glo") || top.includes("main.acn")) {
        const key = `${hash(path.join(dir, "main.glo"))}${hash(path.join(dir, "main.acn"))}`;
        if (toolDone.get("glossaries") !== key) {
          toolDone.set("glossaries", key);
          await run("makeglossaries", ["main"], dir);
          ran = true;
        }
      }
      ran = (await tool("nomencl", "main.nlo", "makeindex", ["main.nlo", "-s", "nomencl.ist", "-o", "main.nls"])) || ran;
      // latexmk's rule: rerun when a tool ran, when LaTeX asks for it, or when a file
      // the next pass reads at \begin{document} or \tableofcontents changed
      const after = readdirSync(dir)
        .filter((f) => AUXLIKE.test(f))
        .sort()
        .map((f) => `${f}:${hash(path.join(dir, f))}`)
        .join(",");
      const log = readFileSync(path.join(dir, "main.log"), "latin1");
      const asks = /Rerun to get|Please rerun|Rerun LaTeX|may have changed/i.test(log);
      const tocChanged = after.replace(/[^,]*\.aux:[^,]*,?/g, "") !== before.replace(/[^,]*\.aux:[^,]*,?/g, "");
      if (!ran && !asks && !tocChanged) break;
      before = after;
    }
    const info = await run("pdfinfo", ["main.pdf"], dir);
    const pages = Number(/^Pages:\s+(\d+)/m.exec(info.out)?.[1] ?? NaN);
    return Number.isFinite(pages) ? { ok: true, pages } : { ok: false, detail: "no PDF" };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function served(url: string, doc: Doc): Promise<Outcome> {
  const r = await compile(url, { engine: doc.engine, source: doc.source, files: doc.files, timeoutMs: 30_000 });
  if (r.status === 200) return { ok: true, pages: Number(r.headers.get("x-compile-pages")) };
  return { ok: false, detail: `${r.status} ${r.json?.error?.message ?? ""}` };
}

let s: RunningServer;
beforeAll(async () => {
  // jobs queue while others run: a generous queue wait, so a busy machine gives no 503
  s = await testServer({ poolSize: { pdflatex: 3, xelatex: 2, lualatex: 2 }, queueTimeoutMs: 600_000, maxQueue: 64 });
});

const docs = readdirSync(CORPUS)
  .sort()
  .filter((n) => !process.env.CORPUS_ONLY || n.includes(process.env.CORPUS_ONLY))
  .map(loadDoc);
const rows: { name: string; same: boolean; api: Outcome; bare: Outcome }[] = [];
const started = Date.now();

afterAll(() => {
  const same = rows.filter((r) => r.same).length;
  console.log(`corpus: ${same}/${rows.length} same outcome and page count (${rows.filter((r) => r.bare.ok).length} PDFs, ${rows.filter((r) => !r.bare.ok).length} errors) in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  return s?.close();
});

it("the corpus has at least 60 documents, at least 8 per engine", () => {
  if (process.env.CORPUS_ONLY) return;
  expect(docs.length).toBeGreaterThanOrEqual(60);
  for (const e of ["pdflatex", "xelatex", "lualatex"]) expect(docs.filter((d) => d.engine === e).length).toBeGreaterThanOrEqual(8);
});

// a few documents at a time (vitest's maxConcurrency); each test compiles its document through
// the API and with the bare engine side by side
describe.concurrent("corpus: same outcome and page count as the bare engine", () => {
  for (const doc of docs) {
    it(`${doc.name} (${doc.engine})`, async () => {
      const [api, ref] = await Promise.all([served(s.url, doc), bare(doc)]);
      const same = api.ok === ref.ok && (!api.ok || api.pages === ref.pages);
      rows.push({ name: doc.name, same, api, bare: ref });
      expect({ ok: api.ok, pages: api.pages }, `API: ${api.detail ?? ""} / bare: ${ref.detail ?? ""}`).toEqual({ ok: ref.ok, pages: ref.pages });
      // the corpus is meant to compile: only the documents named broken-* fail
      expect(ref.ok).toBe(!doc.name.startsWith("broken-"));
    }, 300_000);
  }
});
