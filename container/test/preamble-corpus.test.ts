// Precompiled preambles on the test corpus: every pdflatex document of corpus/ (its project files
// included) gives the same PDF (pages and text), or the same error, from a dumped preamble as
// without. Its own servers (it waits for their dumps), but only jobs and their answers: it runs
// beside the files of the shared server (vitest.config.ts), which keeps the cores busy while it
// waits for dumps that run at the lowest priority. The reference (the edited document compiled
// without a preamble) comes from preamble-golden.json where TeX and the document are unchanged.
import { existsSync, readdirSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningServer } from "../src/server.ts";
import { CORPUS, loadDoc, type Doc } from "./corpus-bare.ts";
import { goldenStore } from "./corpus-golden.ts";
import { compile, expectPdf, pdfPages, pdfText, testServer } from "./helpers.ts";
import { errorCause as cause, preambleGolden, sameAsReference, serverReference as reference } from "./preamble-golden.ts";
import { editBody, onEitherServer } from "./preamble-lanes.ts";
import { SHARED_OPTIONS } from "./shared-server.ts";

let s: RunningServer;
let s2: RunningServer;
beforeAll(async () => {
  // formats are dumped for pdflatex only; the other engines' documents never take this path.
  // Jobs may queue a while on a busy machine, and share the cores with the other files of the
  // parallel group (vitest.config.ts): the shared server's time limit.
  const opts = { poolSize: { pdflatex: 2, xelatex: 0, lualatex: 0 } as never, queueTimeoutMs: 600_000, limits: SHARED_OPTIONS.limits };
  [s, s2] = await Promise.all([testServer(opts), testServer(opts)]);
});
const golden = preambleGolden(Boolean(process.env.PREAMBLE_CORPUS_ONLY));
// the bare engine's outcomes, read only: corpus.test.ts keeps corpus-golden.json (and recomputes
// the stale ones there too)
const bareGolden = goldenStore(true);
afterAll(async () => {
  await Promise.all([s?.close(), s2?.close()]);
  const recomputed = golden.save(corpusCases.map((c) => c.name));
  if (recomputed.length) console.log(`preamble-golden.json: ${recomputed.length} reference(s) recomputed`);
});

interface Case {
  name: string;
  doc: Doc;
  body: Record<string, unknown>;
  /** corpus/broken-*: both paths must fail with the same error. */
  broken: boolean;
}

// the corpus of realistic documents (corpus/<name>/main.tex and its project files; engine from
// "% !TEX program = ..."); PREAMBLE_CORPUS_ONLY=text runs only the folders whose name contains it
const corpusCases: Case[] = [];
const only = process.env.PREAMBLE_CORPUS_ONLY ?? "";
for (const name of readdirSync(CORPUS).sort()) {
  if (!name.includes(only) || !existsSync(path.join(CORPUS, name, "main.tex"))) continue;
  const doc = loadDoc(name);
  const { engine, source, files } = doc;
  if (engine !== "pdflatex") continue;
  corpusCases.push({ name: `corpus/${name}`, doc, body: { engine, source, files }, broken: name.startsWith("broken-") });
}

it("the corpus has pdflatex documents to compare", () => {
  expect(corpusCases.length).toBeGreaterThanOrEqual(only ? 1 : 40);
});

// two documents at a time, one per server; each compiles once into its namespace (the normal path,
// after which the preamble is dumped and verified on the unedited document) while the edited
// document's reference (compiled without a namespace) is read from the golden data or, where it is
// stale or missing, compiled beside it

describe.concurrent("the corpus: same PDF with and without a precompiled preamble", () => {
  const run = onEitherServer(() => [s, s2]);
  corpusCases.forEach((c, i) => {
    it(c.name, { timeout: 300_000 }, () =>
      run(i, async (srv) => {
        const ns = `corpus-dir-${i}`;
        const edited = { ...c.body, source: editBody(c.body.source as string) };
        const [first, got, bare] = await Promise.all([compile(srv.url, { ...c.body, namespace: ns }), golden.reference(c.name, edited, () => reference(srv.url, edited)), bareGolden.outcome(c.doc)]);
        // the first compile is the normal path (no format yet): corpus.test.ts's check of the
        // pdflatex documents, made here so that each is compiled once, is the same outcome and
        // page count as the bare engine's
        const api = first.status === 200 ? { ok: true, pages: Number(first.headers.get("x-compile-pages")) } : { ok: false, pages: undefined };
        expect(api, `API: ${first.status} ${first.json?.error?.message ?? ""} / bare: ${bare.detail ?? ""}`).toEqual({ ok: bare.ok, pages: bare.pages });
        expect(bare.ok).toBe(!c.broken);
        await srv.preambles.idle();
        // the next compile with an edited body: from the format where one was made
        const second = await compile(srv.url, { ...edited, namespace: ns });
        // A stored reference stands for the bare engine's answer, which can change by itself (a
        // document printing \today reads differently tomorrow): one that disagrees is computed again
        // now, and the comparison below is with that.
        let ref = got.ref;
        if (got.stored && !sameAsReference(second, ref)) ref = await reference(srv.url, edited);
        expect(first.status).toBe(ref.status);
        // the corpus is meant to compile, but for broken-*: a reference failing unexpectedly would
        // make both paths fail alike
        expect(ref.status, JSON.stringify(ref.cause)).toBe(c.broken ? 422 : 200);
        expect(second.status).toBe(ref.status);
        if (c.broken) {
          expect(ref.cause?.code).toBe("compile_error");
          expect(cause(second)).toEqual(ref.cause);
          return;
        }
        expectPdf(second);
        expect(pdfPages(second.body)).toBe(ref.pages);
        expect(pdfText(second.body)).toBe(ref.text);
      }),
    );
  });
});
