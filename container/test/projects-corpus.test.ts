// Multi-file projects as people keep them (container/test/projects/*, written for this project):
// CVs with their own class, theses in subfolders with `..` inputs, papers reading their own source
// by \jobname, slides, posters, a book with index and glossary, figures from data files, a
// latexmkrc, names with spaces and umlauts, fonts of their own, METAFONT fonts. Each is sent as a
// client sends a project folder (the main file as `source` at its path, every other file in
// `files`) and compiled by the bare engine in a copy of the folder the way latexmk runs it (in the
// main file's folder, job named after it, tools between passes); outcome and page count must match.
// Each folder's project.json: `main` (its path), `engine` (else pdflatex), `fromRc` (the request
// names neither main path nor engine: the latexmkrc does), `bareEngine`/`bareEnv`/`makeindex`
// (what latexmk would take from that latexmkrc). PROJECTS_ONLY=text runs the folders naming it.
// The bare outcomes are kept in projects-golden.json (preamble-golden.ts says how they are keyed).
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { compile } from "./helpers.ts";
import { goldenRefs, PROJECTS_GOLDEN_FILE } from "./preamble-golden.ts";
import { sharedServer } from "./shared-server.ts";

const PROJECTS = path.join(path.dirname(fileURLToPath(import.meta.url)), "projects");
type Engine = "pdflatex" | "xelatex" | "lualatex";

interface Project {
  name: string;
  main: string;
  engine?: Engine;
  fromRc?: boolean;
  bareEngine?: Engine;
  bareEnv?: Record<string, string>;
  makeindex?: string[];
}

const TEXT = /\.(tex|ltx|xtx|sty|cls|bib|csv|tikz|lco|ist|bst|txt)$|latexmkrc$/;

function filesOf(dir: string, rel = ""): string[] {
  return readdirSync(path.join(dir, rel)).flatMap((n) => {
    const r = rel ? `${rel}/${n}` : n;
    return statSync(path.join(dir, r)).isDirectory() ? filesOf(dir, r) : [r];
  });
}

function load(name: string): Project {
  return { name, ...JSON.parse(readFileSync(path.join(PROJECTS, name, "project.json"), "utf8")) };
}

interface Outcome {
  ok: boolean;
  pages?: number;
  detail?: string;
}

async function served(url: string, p: Project): Promise<Outcome> {
  const dir = path.join(PROJECTS, p.name);
  const files = filesOf(dir)
    .filter((f) => f !== p.main && f !== "project.json")
    .map((f) => {
      const data = readFileSync(path.join(dir, f));
      return TEXT.test(f) ? { path: f, content: data.toString("utf8") } : { path: f, content: data.toString("base64"), encoding: "base64" };
    });
  const body = { source: readFileSync(path.join(dir, p.main), "utf8"), files, timeoutMs: 60_000, ...(p.fromRc ? {} : { mainPath: p.main, engine: p.engine ?? "pdflatex" }) };
  const r = await compile(url, body);
  if (r.status === 200) return { ok: true, pages: Number(r.headers.get("x-compile-pages")) };
  return { ok: false, detail: `${r.status} ${r.json?.error?.message ?? ""}` };
}

function exec(cmd: string, args: string[], cwd: string, env: Record<string, string> = {}): Promise<number> {
  return new Promise((resolve) => {
    execFile(cmd, args, { cwd, timeout: 120_000, maxBuffer: 16 * 1024 * 1024, env: { ...process.env, max_print_line: "10000", ...env } }, (err) =>
      resolve(err ? (typeof (err as { code?: unknown }).code === "number" ? (err as { code: number }).code : 1) : 0),
    );
  });
}

const sha = (f: string) => (existsSync(f) ? createHash("sha1").update(readFileSync(f)).digest("hex") : "");

/** latexmk's way on a copy of the folder: passes in the main file's folder, tools when their input changed. */
async function bare(p: Project): Promise<Outcome> {
  const root = mkdtempSync(path.join(tmpdir(), "projects-"));
  try {
    cpSync(path.join(PROJECTS, p.name), root, { recursive: true });
    const sub = path.dirname(p.main) === "." ? "" : path.dirname(p.main);
    const cwd = path.join(root, sub);
    const file = path.basename(p.main);
    const base = file.slice(0, file.lastIndexOf("."));
    const at = (ext: string) => path.join(cwd, `${base}.${ext}`);
    // a main file in a subfolder also finds files from the project root (as Overleaf and the server do)
    const env = { ...(sub ? { TEXINPUTS: `.:${root}:`, BIBINPUTS: `.:${root}:` } : {}), ...p.bareEnv };
    const engine = p.bareEngine ?? p.engine ?? "pdflatex";
    const seen = new Map<string, string>();
    const changed = (id: string, input: string) => {
      const h = sha(input);
      if (!h || seen.get(id) === h) return false;
      seen.set(id, h);
      return true;
    };
    let state = "";
    for (let pass = 1; pass <= 5; pass++) {
      if ((await exec(engine, ["-interaction=batchmode", "-halt-on-error", "-no-shell-escape", file], cwd, env)) !== 0) return { ok: false, detail: `pass ${pass} failed` };
      let ran = false;
      if (changed("biber", at("bcf"))) ran = (await exec("biber", [base], cwd, env)) === 0 || ran;
      for (const aux of readdirSync(cwd).filter((f) => f.endsWith(".aux"))) {
        const text = readFileSync(path.join(cwd, aux), "utf8");
        if (!existsSync(at("bcf")) && text.includes("\\bibdata{") && changed(aux, path.join(cwd, aux))) ran = (await exec("bibtex", [aux.slice(0, -4)], cwd, env)) === 0 || ran;
      }
      if (changed("idx", at("idx"))) ran = (await exec("makeindex", [...(p.makeindex ?? []), `${base}.idx`], cwd, env)) === 0 || ran;
      if (changed("glo", at("glo")) || changed("acn", at("acn"))) ran = (await exec("makeglossaries", [base], cwd, env)) === 0 || ran;
      const now = readdirSync(cwd)
        .filter((f) => /\.(toc|lof|lot|out|nav|snm|bbl|ind|gls|acr)$/.test(f))
        .sort()
        .map((f) => `${f}:${sha(path.join(cwd, f))}`)
        .join(",");
      const log = readFileSync(at("log"), "latin1");
      const asks = /Rerun to get|Please rerun|Rerun LaTeX|may have changed/i.test(log);
      if (!ran && !asks && now === state) break;
      state = now;
    }
    if (engine === "xelatex" || existsSync(at("pdf"))) {
      const pages = /Output written on .*\((\d+) pages?/.exec(readFileSync(at("log"), "latin1"))?.[1];
      return pages ? { ok: true, pages: Number(pages) } : { ok: false, detail: "no pages" };
    }
    return { ok: false, detail: "no PDF" };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

// the compile server every job-only test file shares (vitest.config.ts)
const s = sharedServer();

const projects = readdirSync(PROJECTS)
  .sort()
  .filter((n) => !process.env.PROJECTS_ONLY || n.includes(process.env.PROJECTS_ONLY))
  .map(load);

it("at least 20 projects, with every engine", () => {
  if (process.env.PROJECTS_ONLY) return;
  expect(projects.length).toBeGreaterThanOrEqual(20);
  for (const e of ["xelatex", "lualatex"]) expect(projects.filter((p) => (p.engine ?? p.bareEngine) === e).length).toBeGreaterThanOrEqual(3);
});

// only a compiling project's outcome is kept: one failing bare fails its test and is recomputed
const golden = goldenRefs<Outcome>(PROJECTS_GOLDEN_FILE, process.env.PROJECTS_GOLDEN === "update", Boolean(process.env.PROJECTS_ONLY), (o) => o.ok);
afterAll(() => {
  const recomputed = golden.save(projects.map((p) => p.name));
  if (recomputed.length) console.log(`projects-golden.json: ${recomputed.length} outcome(s) recomputed`);
});
/** The project's input: its settings and every file's name and bytes. */
const inputOf = (p: Project) => [p, ...filesOf(path.join(PROJECTS, p.name)).sort().map((f) => [f, sha(path.join(PROJECTS, p.name, f))])];

describe.concurrent("projects: the bare engine's outcome and page count", () => {
  for (const p of projects) {
    it(`${p.name} (${p.main})`, async () => {
      const [api, { ref }] = await Promise.all([served(s.url, p), golden.reference(p.name, inputOf(p), () => bare(p))]);
      expect({ ok: api.ok, pages: api.pages }, `API: ${api.detail ?? ""} / bare: ${ref.detail ?? ""}`).toEqual({ ok: ref.ok, pages: ref.pages });
      expect(ref.ok, "every project compiles").toBe(true);
    }, 300_000);
  }
});
