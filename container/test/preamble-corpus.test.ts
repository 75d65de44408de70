// Precompiled preambles on the test corpus: every pdflatex document of corpus/ (its project files
// included) gives the same PDF (pages and text), or the same error, from a dumped preamble as
// without. Its own servers (it waits for their dumps), but only jobs and their answers: it runs
// beside the files of the shared server (vitest.config.ts), which keeps the cores busy while it
// waits for dumps that run at the lowest priority.
import { existsSync, readdirSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningServer } from "../src/server.ts";
import { CORPUS, loadDoc } from "./corpus-bare.ts";
import { compile, expectPdf, pdfPages, pdfText, testServer } from "./helpers.ts";
import { editBody, onEitherServer } from "./preamble-lanes.ts";

let s: RunningServer;
let s2: RunningServer;
beforeAll(async () => {
  // formats are dumped for pdflatex only; the other engines' documents never take this path.
  // Jobs may queue a while on a busy machine.
  const opts = { poolSize: { pdflatex: 2, xelatex: 0, lualatex: 0 } as never, queueTimeoutMs: 600_000 };
  [s, s2] = await Promise.all([testServer(opts), testServer(opts)]);
});
afterAll(async () => {
  await Promise.all([s?.close(), s2?.close()]);
});

interface Case {
  name: string;
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
  const { engine, source, files } = loadDoc(name);
  if (engine !== "pdflatex") continue;
  corpusCases.push({ name: `corpus/${name}`, body: { engine, source, files }, broken: name.startsWith("broken-") });
}

it("the corpus has pdflatex documents to compare", () => {
  expect(corpusCases.length).toBeGreaterThanOrEqual(only ? 1 : 40);
});

// two documents at a time, one per server; each compiles once into its namespace (the normal path,
// after which the preamble is dumped and verified on the unedited document) while the edited
// document is compiled without a namespace, the reference for the edited compile from the format
describe.concurrent("the corpus: same PDF with and without a precompiled preamble", () => {
  const run = onEitherServer(() => [s, s2]);
  corpusCases.forEach((c, i) => {
    it(c.name, { timeout: 300_000 }, () =>
      run(i, async (srv) => {
        const ns = `corpus-dir-${i}`;
        const edited = { ...c.body, source: editBody(c.body.source as string) };
        const [first, refEdited] = await Promise.all([compile(srv.url, { ...c.body, namespace: ns }), compile(srv.url, edited)]);
        expect(first.status).toBe(refEdited.status);
        await srv.preambles.idle();
        // the next compile with an edited body: from the format where one was made
        const second = await compile(srv.url, { ...edited, namespace: ns });
        // the corpus is meant to compile, but for broken-*: a reference failing unexpectedly would
        // make both paths fail alike
        expect(refEdited.status, JSON.stringify(refEdited.json?.error)).toBe(c.broken ? 422 : 200);
        expect(second.status).toBe(refEdited.status);
        if (c.broken) {
          const cause = (r: typeof second) => ({ code: r.json.error.code, message: r.json.error.message, file: r.json.error.file, line: r.json.error.line });
          expect(cause(refEdited).code).toBe("compile_error");
          expect(cause(second)).toEqual(cause(refEdited));
          return;
        }
        expectPdf(second);
        expect(pdfPages(second.body)).toBe(pdfPages(refEdited.body));
        expect(pdfText(second.body)).toBe(pdfText(refEdited.body));
      }),
    );
  });
});
