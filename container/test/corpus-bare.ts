// The corpus (container/test/corpus/*/main.tex and its project files) and the bare engine's
// outcome for each document: run outside the sandbox with a latexmk-like sequence computed here:
// engine passes, and between them biber/bibtex, makeindex (xindy when imakeidx asks for it,
// splitindex for splitidx), makeglossaries and nomencl's makeindex whenever their input changed,
// until the .aux-like files are stable. The engine comes from "% !TEX program = ...".
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { pdfText } from "./helpers.ts";

export const CORPUS = path.join(path.dirname(fileURLToPath(import.meta.url)), "corpus");
export type Engine = "pdflatex" | "xelatex" | "lualatex";

export interface Doc {
  name: string;
  engine: Engine;
  source: string;
  files: { path: string; content: string; encoding: "utf8" | "base64" }[];
  /** sha256 over the folder's file names and bytes: a changed document gets a new outcome */
  hash: string;
}

export interface Outcome {
  ok: boolean;
  pages?: number;
  /** pdftotext of the PDF (xelatex documents: the server runs their PDF driver itself). */
  text?: string;
  detail?: string;
}

function listFiles(dir: string, rel = ""): string[] {
  return readdirSync(path.join(dir, rel))
    .sort()
    .flatMap((n) => {
      const r = rel ? `${rel}/${n}` : n;
      return statSync(path.join(dir, r)).isDirectory() ? listFiles(dir, r) : [r];
    });
}

export function loadDoc(name: string): Doc {
  const dir = path.join(CORPUS, name);
  const source = readFileSync(path.join(dir, "main.tex"), "utf8");
  const program = /^% !TEX program = (\w+)/.exec(source)?.[1] ?? "pdflatex";
  const h = createHash("sha256");
  for (const f of listFiles(dir)) h.update(`${f}\0`).update(readFileSync(path.join(dir, f))).update("\0");
  const files = listFiles(dir)
    .filter((f) => f !== "main.tex")
    .map((f) => {
      const data = readFileSync(path.join(dir, f));
      const text = /\.(tex|sty|cls|bib|dat|csv|ist|bst|txt)$/.test(f);
      return { path: f, content: text ? data.toString("utf8") : data.toString("base64"), encoding: text ? ("utf8" as const) : ("base64" as const) };
    });
  return { name, engine: program as Engine, source, files, hash: h.digest("hex") };
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
export async function bare(doc: Doc): Promise<Outcome> {
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
    const text = doc.engine === "xelatex" ? pdfText(readFileSync(path.join(dir, "main.pdf"))) : undefined;
    return Number.isFinite(pages) ? { ok: true, pages, text } : { ok: false, detail: "no PDF" };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
