// Precompiled preambles: a document compiled from a dumped preamble gives the same PDF
// (pages and text) as without (for the documents of the test corpus: preamble-corpus.test.ts);
// formats are per namespace and follow the project files the preamble reads. The cache's bounds,
// fallback, processes and background work: preamble-cache.test.ts (a file of its own, so the two
// run side by side).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningServer } from "../src/server.ts";
import { compile, doc, expectPdf, fixture, pdfPages, pdfText, testServer } from "./helpers.ts";
import { preambleCasesGolden, sameAsReference, serverReference } from "./preamble-golden.ts";
import { editBody, onEitherServer } from "./preamble-lanes.ts";
import { SHARED_OPTIONS } from "./shared-server.ts";

let s: RunningServer;
/** A second server like `s`: each dumps one preamble at a time, so the comparisons below run on both. */
let s2: RunningServer;
beforeAll(async () => {
  // two cases at a time, one per server: jobs may queue a while on a busy machine, and share the
  // cores with the other files of the parallel group (vitest.config.ts): the shared server's time limit
  const opts = { poolSize: { pdflatex: 2, xelatex: 1, lualatex: 1 } as never, queueTimeoutMs: 600_000, limits: SHARED_OPTIONS.limits };
  [s, s2] = await Promise.all([testServer(opts), testServer(opts)]);
});
const golden = preambleCasesGolden();
afterAll(async () => {
  await Promise.all([s?.close(), s2?.close()]);
  const recomputed = golden.save(cases.flatMap((c) => [c.name, `${c.name}, edited`]));
  if (recomputed.length) console.log(`preamble-cases-golden.json: ${recomputed.length} reference(s) recomputed`);
});

interface Case {
  name: string;
  body: Record<string, unknown>;
  /** The format path is expected to take it (else: it must fall back, same output). */
  hit: boolean;
}

const bib = fixture("refs.bib");
const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAEElEQVR4nGP4z8AARAwQCgAf7gP9i18U1AAAAABJRU5ErkJggg==";

const cases: Case[] = [
  { name: "hello (no packages: not worth a format)", body: { engine: "pdflatex", source: fixture("hello.tex") }, hit: false },
  { name: "medium (toc, refs, tikz, hyperref)", body: { engine: "pdflatex", source: fixture("medium.tex") }, hit: true },
  { name: "medium, xelatex", body: { engine: "xelatex", source: fixture("medium.tex") }, hit: false },
  { name: "amsmath, lualatex", body: { engine: "lualatex", source: doc("Euler: $e^{i\\pi} + 1 = 0$ and \\[ \\sum_{k=1}^n k = \\frac{n(n+1)}{2} \\]", "\\usepackage{amsmath}\n") }, hit: false },
  // a document that runs a tool (bibtex, biber, makeindex) is not dumped: its verification would
  // run the tool again in the background
  {
    name: "bibtex",
    body: { engine: "pdflatex", source: doc("See \\cite{knuth84}.\n\\bibliographystyle{plain}\n\\bibliography{refs}", "\\usepackage{amsmath}\n"), files: [{ path: "refs.bib", content: bib }] },
    hit: false,
  },
  {
    name: "biblatex + biber",
    body: { engine: "pdflatex", source: doc("See \\cite{knuth84}.\n\\printbibliography", "\\usepackage[backend=biber]{biblatex}\n\\addbibresource{refs.bib}\n"), files: [{ path: "refs.bib", content: bib }] },
    hit: false,
  },
  {
    name: "preamble reads project files, main file in a subfolder",
    body: {
      engine: "pdflatex",
      mainPath: "paper/paper.tex",
      source: "\\documentclass{article}\n\\input{macros}\n\\usepackage{graphicx}\n\\begin{document}\n\\hello{} \\includegraphics[width=1cm]{figs/dot.png}\n\\end{document}\n",
      files: [
        { path: "paper/macros.tex", content: "\\newcommand\\hello{Hello from macros.}\n" },
        { path: "figs/dot.png", content: PNG, encoding: "base64" },
      ],
    },
    hit: true,
  },
  {
    name: "draft",
    body: { engine: "pdflatex", draft: true, source: doc("Figure \\includegraphics[width=2cm]{dot.png}", "\\usepackage{graphicx}\n"), files: [{ path: "dot.png", content: PNG, encoding: "base64" }] },
    hit: true,
  },
  {
    name: "makeindex opens its file in the preamble",
    body: { engine: "pdflatex", source: doc("Apples\\index{apple} and pears\\index{pear}.\n\\printindex", "\\usepackage{makeidx}\n\\makeindex\n") },
    hit: false,
  },
  { name: "fontspec, xelatex", body: { engine: "xelatex", source: doc("Unicode: äöü — ĳ", "\\usepackage{fontspec}\n\\setmainfont{DejaVu Serif}\n") }, hit: false },
  { name: "fontspec, lualatex", body: { engine: "lualatex", source: doc("Unicode: äöü", "\\usepackage{fontspec}\n") }, hit: false },
  { name: "preamble that writes a file", body: { engine: "pdflatex", source: doc("Body.", "\\newwrite\\f\\immediate\\openout\\f=x.txt\\immediate\\write\\f{hi}\\immediate\\closeout\\f\n") }, hit: false },
];

// each case compiles into its namespace (after which the preamble is dumped and verified), then
// again as it is and edited, from the format where one was made; the references (each document
// compiled without a namespace, i.e. no precompiled preamble) are read from
// preamble-cases-golden.json or, where stale or missing, compiled beside the first compile
describe.concurrent("same PDF with and without a precompiled preamble", () => {
  const run = onEitherServer(() => [s, s2]);
  cases.forEach((c, i) => {
    it(c.name, { timeout: 180_000 }, () =>
      run(i, async (srv) => {
        const ns = `corpus-${i}`;
        const edited = { ...c.body, source: editBody(c.body.source as string) };
        const [first, got, gotEdited] = await Promise.all([
          compile(srv.url, { ...c.body, namespace: ns }),
          golden.reference(c.name, c.body, () => serverReference(srv.url, c.body)),
          golden.reference(`${c.name}, edited`, edited, () => serverReference(srv.url, edited)),
        ]);
        await srv.preambles.idle();
        const second = await compile(srv.url, { ...c.body, namespace: ns });
        // the next compile, with an edited body, from the same format where there is one
        const third = await compile(srv.url, { ...edited, namespace: ns });
        // a stored reference that disagrees is computed again now (the engine's answer can change
        // by itself, as a document printing \today does), and the comparison below is with that
        const ref = got.stored && !(sameAsReference(first, got.ref) && sameAsReference(second, got.ref)) ? await serverReference(srv.url, c.body) : got.ref;
        const refEdited = gotEdited.stored && !sameAsReference(third, gotEdited.ref) ? await serverReference(srv.url, edited) : gotEdited.ref;
        // every case is a valid document: a reference that failed would make both paths fail alike
        // (a failure names the engine's own words: the end of the log of the compile that failed)
        const why = (cause: unknown) => [JSON.stringify(cause), ...[first, second, third].filter((r) => r.status !== 200).map((r) => `log tail: ${String(r.json?.error?.log ?? "").slice(-1500)}`)].join("\n");
        expect(ref.status, why(ref.cause)).toBe(200);
        expect(refEdited.status, why(refEdited.cause)).toBe(200);
        expect(first.status).toBe(ref.status);
        expect(second.status).toBe(ref.status);
        if (c.hit) expect(second.headers.get("x-compile-preamble")).toBe("hit");
        for (const r of [first, second]) {
          expectPdf(r);
          expect(pdfPages(r.body)).toBe(ref.pages);
          expect(pdfText(r.body)).toBe(ref.text);
        }
        expectPdf(third);
        if (c.hit) expect(third.headers.get("x-compile-preamble")).toBe("hit");
        expect(pdfText(third.body)).toContain("Edited line.");
        expect(pdfPages(third.body)).toBe(refEdited.pages);
        expect(pdfText(third.body)).toBe(refEdited.text);
      }),
    );
  });
});

describe("scope and invalidation", () => {
  const medium = fixture("medium.tex");

  it("a format is never used for another namespace, nor without one", async () => {
    await compile(s.url, { engine: "pdflatex", source: medium, namespace: "acct-a" });
    await s.preambles.idle();
    const a = await compile(s.url, { engine: "pdflatex", source: editBody(medium), namespace: "acct-a" });
    expect(a.headers.get("x-compile-preamble")).toBe("hit");
    const b = await compile(s.url, { engine: "pdflatex", source: editBody(medium), namespace: "acct-b" });
    expect(b.headers.get("x-compile-preamble")).toBe("miss");
    const none = await compile(s.url, { engine: "pdflatex", source: editBody(medium) });
    expect(none.headers.get("x-compile-preamble")).toBeNull();
  });

  it("a changed project file read by the preamble is not served from the old format", async () => {
    const body = (macro: string) => ({
      engine: "pdflatex",
      namespace: "acct-macros",
      source: "\\documentclass{article}\n\\usepackage{amsmath}\n\\input{macros}\n\\begin{document}\n\\hello\n\\end{document}\n",
      files: [{ path: "macros.tex", content: `\\newcommand\\hello{${macro}}\n` }],
    });
    await compile(s.url, body("Old macro."));
    await s.preambles.idle();
    const same = await compile(s.url, body("Old macro."));
    expect(same.headers.get("x-compile-preamble")).toBe("hit");
    const changed = await compile(s.url, body("New macro."));
    expectPdf(changed);
    expect(changed.headers.get("x-compile-preamble")).toBe("miss");
    expect(pdfText(changed.body)).toContain("New macro.");
  });

  it("rejects a malformed namespace", async () => {
    const r = await compile(s.url, { engine: "pdflatex", source: doc("x"), namespace: "../other" });
    expect(r.status).toBe(400);
    expect(r.json.error.message).toContain("namespace");
  });
});
