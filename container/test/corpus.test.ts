// The corpus (container/test/corpus/*/main.tex and its project files, written for
// this project): every document must give the same outcome (PDF or error) and the
// same page count through the compile server as the bare engine on this machine
// (corpus-bare.ts: outside the sandbox, with a latexmk-like sequence of passes and tools);
// for xelatex documents also the same text (pdftotext). The bare outcomes are stored in
// corpus-golden.json, keyed by the TeX installation (corpus-golden.ts): a run compiles each
// document once, through the server, unless TeX or the document changed (or CORPUS_GOLDEN=update).
// CORPUS_ONLY=text runs only the documents whose folder name contains it. The pdflatex documents are
// compiled through the server by preamble-corpus.test.ts, whose first compile of each (no format
// yet: the normal path) is checked there against the same stored outcome; here their stored
// outcome is only kept current.
import { spawnSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import { CORPUS, loadDoc, type Doc, type Outcome } from "./corpus-bare.ts";
import { GOLDEN_FILE, goldenStore, texIdentity } from "./corpus-golden.ts";
import { compile, pdfText } from "./helpers.ts";
import { sharedServer } from "./shared-server.ts";

async function served(url: string, doc: Doc): Promise<Outcome> {
  const r = await compile(url, { engine: doc.engine, source: doc.source, files: doc.files });
  if (r.status === 200) return { ok: true, pages: Number(r.headers.get("x-compile-pages")), text: doc.engine === "xelatex" ? pdfText(r.body) : undefined };
  return { ok: false, detail: `${r.status} ${r.json?.error?.message ?? ""}` };
}

const s = sharedServer();

const docs: Doc[] = readdirSync(CORPUS)
  .sort()
  .filter((n) => !process.env.CORPUS_ONLY || n.includes(process.env.CORPUS_ONLY))
  .map(loadDoc);
const rows: { name: string; same: boolean; api: Outcome; bare: Outcome }[] = [];
const started = Date.now();
const golden = goldenStore(Boolean(process.env.CORPUS_ONLY));

afterAll(() => {
  const same = rows.filter((r) => r.same).length;
  const recomputed = golden.save(docs);
  const fresh = recomputed.length ? `; bare engine run for ${recomputed.length} (${GOLDEN_FILE} rewritten: commit it)` : "; bare outcomes from the stored file";
  console.log(`corpus: ${same}/${rows.length} same outcome and page count (${rows.filter((r) => r.bare.ok).length} PDFs, ${rows.filter((r) => !r.bare.ok).length} errors) in ${((Date.now() - started) / 1000).toFixed(0)} s${fresh}`);
});

it("the corpus has at least 60 documents, at least 8 per engine", () => {
  if (process.env.CORPUS_ONLY) return;
  expect(docs.length).toBeGreaterThanOrEqual(60);
  for (const e of ["pdflatex", "xelatex", "lualatex"]) expect(docs.filter((d) => d.engine === e).length).toBeGreaterThanOrEqual(8);
});

it("the stored outcomes are keyed by the installed TeX: each engine's version line and the package set", () => {
  const id = texIdentity();
  for (const e of ["pdflatex", "xelatex", "lualatex", "biber"]) expect(id).toContain(spawnSync(e, ["--version"], { encoding: "utf8" }).stdout.split("\n")[0]!.trim());
  expect(id).toMatch(/packages sha256:[0-9a-f]{64}$/);
});

// a few documents at a time (vitest's maxConcurrency); each test compiles its document through
// the API (and with the bare engine side by side when its stored outcome is stale)
describe.concurrent("corpus: same outcome and page count as the bare engine", () => {
  for (const doc of docs.filter((d) => d.engine === "pdflatex")) {
    it(`${doc.name} (pdflatex: the bare outcome kept current here, compiled by preamble-corpus.test.ts)`, async () => {
      expect((await golden.outcome(doc)).ok).toBe(!doc.name.startsWith("broken-"));
    }, 300_000);
  }
  for (const doc of docs.filter((d) => d.engine !== "pdflatex")) {
    it(`${doc.name} (${doc.engine})`, async () => {
      const [api, ref] = await Promise.all([served(s.url, doc), golden.outcome(doc)]);
      const same = api.ok === ref.ok && (!api.ok || api.pages === ref.pages);
      rows.push({ name: doc.name, same, api, bare: ref });
      expect({ ok: api.ok, pages: api.pages }, `API: ${api.detail ?? ""} / bare: ${ref.detail ?? ""}`).toEqual({ ok: ref.ok, pages: ref.pages });
      expect(api.text, "the PDF's text").toBe(ref.text);
      // the corpus is meant to compile: only the documents named broken-* fail
      expect(ref.ok).toBe(!doc.name.startsWith("broken-"));
    }, 300_000);
  }
});
