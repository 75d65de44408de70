// Tools between passes, as latexmk runs them, with real documents: the PDF's text
// proves each index, glossary, nomenclature and bibliography is there.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { planTools } from "../src/passes.ts";
import type { RunningServer } from "../src/server.ts";
import { compile, doc, expectPdf, fixture, pdfText, testServer } from "./helpers.ts";

let s: RunningServer;
beforeAll(async () => {
  s = await testServer({ poolSize: { pdflatex: 2, xelatex: 1, lualatex: 1 } });
});
afterAll(() => s?.close());

const utf8 = (path: string, content: string) => ({ path, content, encoding: "utf8" });
const passes = (r: { headers: Headers }) => Number(r.headers.get("x-compile-passes"));
const tools = (r: { headers: Headers }) => r.headers.get("x-compile-tools") ?? "";
/** pdftotext's text with runs of blanks made single spaces. */
const text = (pdf: Buffer) => pdfText(pdf).replace(/[ \t]+/g, " ");

const body = [
  "Apples\\index{apple} and pears\\index{pear}.",
  "\\newpage",
  "More apples\\index{apple} and a banana\\index{banana!ripe}.",
].join("\n");

describe("indexes (makeindex)", () => {
  it("makeidx: the index is built, with the right pages", async () => {
    const r = await compile(s.url, { engine: "pdflatex", source: doc(`${body}\n\\printindex`, "\\usepackage{makeidx}\n\\makeindex\n") });
    expectPdf(r);
    const t = text(r.body);
    expect(t).toContain("Index");
    expect(t).toMatch(/apple, 1, 2/);
    expect(t).toMatch(/pear, 1/);
    expect(t).toMatch(/ripe, 2/);
    expect(tools(r)).toBe("makeindex");
    expect(passes(r)).toBe(2);
  });

  const customIst = 'delim_0 " :: "\nheadings_flag 1\nheading_prefix "\\\\textbf{Letter "\nheading_suffix "}\\\\par\\\\nopagebreak\\n"\n';

  it("imakeidx: the style given in \\makeindex[options=-s ...] (a project file) is used", async () => {
    const r = await compile(s.url, {
      engine: "xelatex",
      source: doc(`${body}\n\\printindex`, "\\usepackage{imakeidx}\n\\makeindex[options=-s styles/custom.ist]\n"),
      files: [utf8("styles/custom.ist", customIst)],
    });
    expectPdf(r);
    const t = text(r.body);
    expect(t).toMatch(/apple :: 1, 2/);
    expect(t).toContain("Letter A");
    expect(t).toContain("Letter P");
  });

  it("makeidx: the style named by the project's latexmkrc is used", async () => {
    const r = await compile(s.url, {
      engine: "pdflatex",
      source: doc(`${body}\n\\printindex`, "\\usepackage{makeidx}\n\\makeindex\n"),
      files: [utf8("custom.ist", customIst), utf8("latexmkrc", "$makeindex = 'makeindex -s custom.ist %O -o %D %S';\n")],
    });
    expectPdf(r);
    expect(text(r.body)).toMatch(/apple :: 1, 2/);
  });

  it("several indexes (imakeidx name=...), each built", async () => {
    const source = doc(
      "Knuth\\index[persons]{Knuth} wrote \\TeX\\index{TeX}; Lamport\\index[persons]{Lamport} wrote \\LaTeX\\index{LaTeX}.\n\\printindex\n\\printindex[persons]",
      "\\usepackage{imakeidx}\n\\makeindex\n\\makeindex[name=persons,title=Index of persons]\n",
    );
    const r = await compile(s.url, { engine: "lualatex", source });
    expectPdf(r);
    const t = text(r.body);
    expect(t).toContain("Index of persons");
    expect(t).toMatch(/Knuth, 1/);
    expect(t).toMatch(/Lamport, 1/);
    expect(t).toMatch(/LaTeX, 1/);
  });

  it("a style file that does not exist: 422 naming it", async () => {
    const r = await compile(s.url, { engine: "pdflatex", source: doc(`${body}\n\\printindex`, "\\usepackage{imakeidx}\n\\makeindex[options=-s nosuch.ist]\n") });
    expect(r.status).toBe(422);
    expect(r.json.error.code).toBe("compile_error");
    expect(r.json.error.message).toMatch(/^makeindex: .*nosuch\.ist/);
  });

  it("a style outside the project is refused before makeindex runs", async () => {
    const r = await compile(s.url, { engine: "pdflatex", source: doc(`${body}\n\\printindex`, "\\usepackage{imakeidx}\n\\makeindex[options=-s ../../etc/x.ist]\n") });
    expect(r.status).toBe(422);
    expect(r.json.error.message).toContain("makeindex style");
  });

  it("no index entries, no \\makeindex: makeindex never runs", async () => {
    const r = await compile(s.url, { engine: "pdflatex", source: doc("Plain text.") });
    expectPdf(r);
    expect(tools(r)).toBe("");
    expect(passes(r)).toBe(1);
  });
});

describe("glossaries and nomenclature", () => {
  it("glossaries: main glossary and acronyms (.glo/.acn through makeindex)", async () => {
    const source = doc(
      "\\gls{latex} is built on \\gls{tex}. An \\gls{api} is an \\gls{api}.\n\\printglossaries",
      [
        "\\usepackage[acronym]{glossaries}",
        "\\makeglossaries",
        "\\newglossaryentry{latex}{name=LaTeX,description={A document preparation system}}",
        "\\newglossaryentry{tex}{name=TeX,description={A typesetting program by Knuth}}",
        "\\newacronym{api}{API}{application programming interface}",
        "",
      ].join("\n"),
    );
    const r = await compile(s.url, { engine: "pdflatex", source });
    expectPdf(r);
    const t = text(r.body);
    expect(t).toContain("Glossary");
    expect(t).toContain("Acronyms");
    expect(t).toMatch(/LaTeX A document preparation system\. 1/);
    expect(t).toMatch(/TeX A typesetting program by Knuth\. 1/);
    expect(t).toMatch(/API application programming interface\. 1/);
    expect(tools(r)).toBe("makeindex");
  });

  it("nomencl: the .nlo becomes the list with nomencl.ist", async () => {
    const source = doc(
      "Energy $E = mc^2$\\nomenclature{$c$}{Speed of light in vacuum}\\nomenclature{$E$}{Energy}.\n\\printnomenclature",
      "\\usepackage{nomencl}\n\\makenomenclature\n",
    );
    const r = await compile(s.url, { engine: "pdflatex", source });
    expectPdf(r);
    const t = text(r.body);
    expect(t).toContain("Nomenclature");
    expect(t).toContain("Speed of light in vacuum");
    expect(t).toMatch(/E\s+Energy/);
  });
});

describe("index tools beyond makeindex", () => {
  it("imakeidx with xindy: texindy builds the index (German sorting of Ä)", async () => {
    const source = doc(
      "Äpfel\\index{Äpfel} und Birnen\\index{Birnen}, Zebras\\index{Zebra}.\n\\newpage\nMehr Äpfel\\index{Äpfel}.\n\\printindex",
      "\\usepackage[T1]{fontenc}\n\\usepackage[xindy]{imakeidx}\n\\makeindex[options=-L german-din5007 -C utf8]\n",
    );
    const r = await compile(s.url, { engine: "pdflatex", source });
    expectPdf(r);
    const t = text(r.body);
    expect(tools(r)).toBe("xindy");
    expect(t).toMatch(/Äpfel, 1, 2/);
    // German order: Ä with A, before B
    expect(t.indexOf("Äpfel, 1")).toBeLessThan(t.indexOf("Birnen, 1"));
    expect(t).toMatch(/Zebra, 1/);
  });

  it("imakeidx with xindy: an option outside the allowed set is a 422 before xindy runs", async () => {
    const source = doc("A\\index{a}.\n\\printindex", "\\usepackage[xindy]{imakeidx}\n\\makeindex[options=-M /etc/passwd]\n");
    const r = await compile(s.url, { engine: "pdflatex", source });
    expect(r.status).toBe(422);
    expect(r.json?.error?.message).toContain("xindy options for main.idx are not allowed");
  });

  it("glossaries with the xindy option: xindy makes the glossary as makeglossaries would", async () => {
    const source = doc(
      "A \\gls{lattice} and a \\gls{poset}.\n\\printglossaries",
      "\\usepackage[xindy]{glossaries}\n\\makeglossaries\n\\newglossaryentry{lattice}{name=lattice,description={a poset with joins and meets}}\n\\newglossaryentry{poset}{name=poset,description={a partially ordered set}}\n",
    );
    const r = await compile(s.url, { engine: "pdflatex", source });
    expectPdf(r);
    const t = text(r.body);
    expect(tools(r)).toBe("xindy");
    expect(t).toContain("Glossary");
    expect(t).toMatch(/lattice a poset with joins and meets\. 1/);
    expect(t).toMatch(/poset a partially ordered set\. 1/);
  });

  it("splitidx: splitindex splits the raw index, each index is built", async () => {
    const source = doc(
      "Knuth\\sindex[per]{Knuth} wrote \\TeX\\sindex{TeX}; Lamport\\sindex[per]{Lamport} wrote \\LaTeX\\sindex{LaTeX}.\n\\printindex[idx]\n\\printindex[per]",
      "\\usepackage{splitidx}\n\\makeindex\n\\newindex[General index]{idx}\n\\newindex[Index of persons]{per}\n",
    );
    const r = await compile(s.url, { engine: "pdflatex", source });
    expectPdf(r);
    const t = text(r.body);
    expect(tools(r).split(",").sort()).toEqual(["makeindex", "splitindex"]);
    expect(t).toContain("General index");
    expect(t).toContain("Index of persons");
    expect(t.indexOf("LaTeX, 1")).toBeLessThan(t.indexOf("Index of persons"));
    expect(t.indexOf("Index of persons")).toBeLessThan(t.indexOf("Knuth, 1"));
    expect(t).toMatch(/Lamport, 1/);
    expect(t).toMatch(/LaTeX, 1/);
    // one engine pass, splitindex and makeindex, the pass that reads the indexes
    expect(passes(r)).toBe(2);
  });

  it("glossaries-extra with record (bib2gls): a 422 naming the missing tool", async () => {
    const source = doc("\\gls{x}.\n\\printunsrtglossaries", "\\usepackage[record]{glossaries-extra}\n\\GlsXtrLoadResources[src=terms]\n");
    const r = await compile(s.url, { engine: "pdflatex", source, files: [utf8("terms.bib", "@entry{x, name={x}, description={an unknown}}\n")] });
    expect(r.status).toBe(422);
    expect(r.json?.error?.message).toContain("needs bib2gls");
  });
});

describe("bibliographies", () => {
  const bib = `${fixture("refs.bib")}
@misc{w3c,
  author = {{W3C}},
  title  = {HTML Living Standard},
  year   = {2024}
}
`;
  it("multibib: bibtex runs for each .aux that names a database", async () => {
    const source = doc(
      "Printed \\cite{knuth84}; online \\citeweb{w3c}.\n\\bibliographystyle{plain}\\bibliography{refs}\n\\bibliographystyleweb{plain}\\bibliographyweb{refs}",
      "\\usepackage{multibib}\n\\newcites{web}{Web sources}\n",
    );
    const r = await compile(s.url, { engine: "pdflatex", source, files: [utf8("refs.bib", bib)] });
    expectPdf(r);
    const t = text(r.body);
    expect(t).toContain("Printed [1]; online [2].");
    expect(t).toMatch(/The T\s*E\s*Xbook/);
    expect(t).toContain("Web sources");
    expect(t).toContain("Html living standard"); // plain.bst lowercases titles
    expect(r.headers.get("x-compile-bib")).toBe("bibtex");
  });

  it("a bibliography, an index and a glossary in one document, within the pass limit", async () => {
    const source = doc(
      "\\section{One}\\label{one}See \\cite{knuth84}, \\gls{tex}, section~\\ref{one}\\index{section}.\n\\printglossaries\n\\bibliographystyle{plain}\\bibliography{refs}\n\\printindex",
      "\\usepackage{makeidx}\\makeindex\n\\usepackage{glossaries}\\makeglossaries\n\\newglossaryentry{tex}{name=TeX,description={A typesetting program}}\n",
    );
    const r = await compile(s.url, { engine: "pdflatex", source, files: [utf8("refs.bib", bib)] });
    expectPdf(r);
    const t = text(r.body);
    expect(t).toContain("See [1], TeX, section 1");
    expect(t).toMatch(/section, 1/);
    expect(t).toContain("A typesetting program");
    expect(t).toMatch(/The T\s*E\s*Xbook/);
    expect(tools(r).split(",").sort()).toEqual(["bibtex", "makeindex"]);
    expect(passes(r)).toBeLessThanOrEqual(4);
  });

  it("bibtex: a missing database is a 422 naming it", async () => {
    const source = doc("\\cite{knuth84}\n\\bibliographystyle{plain}\\bibliography{nosuch}");
    const r = await compile(s.url, { engine: "pdflatex", source, files: [utf8("refs.bib", bib)] });
    expect(r.status).toBe(422);
    expect(r.json.error.message).toMatch(/^bibtex: I couldn't open database file nosuch\.bib/);
  });
});

describe("each tool runs only when its input changed", () => {
  it("planTools: a second plan with the same inputs is empty; a changed input plans that one run", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "plan-"));
    try {
      writeFileSync(path.join(dir, "main.idx"), "\\indexentry{apple}{1}\n");
      writeFileSync(path.join(dir, "main.nlo"), "\\nomenclatureentry{a}{1}\n");
      writeFileSync(path.join(dir, "main.glo"), "\\glossaryentry{x}{1}\n");
      writeFileSync(path.join(dir, "main.aux"), "\\@istfilename{main.ist}\n\\@newglossary{main}{glg}{gls}{glo}\n\\bibdata{refs}\n\\citation{k}\n");
      const done = new Map<string, string>();
      const first = await planTools(dir, "", done, true);
      if (!first.ok) throw new Error(first.message);
      expect(first.runs.map((r) => r.id).sort()).toEqual(["bibtex main.aux", "makeindex main.glo", "makeindex main.idx", "makeindex main.nlo"]);
      for (const r of first.runs) done.set(r.id, r.key);
      const again = await planTools(dir, "", done, true);
      expect(again.ok && again.runs).toEqual([]);
      writeFileSync(path.join(dir, "main.idx"), "\\indexentry{apple}{1}\n\\indexentry{pear}{2}\n");
      const changed = await planTools(dir, "", done, true);
      expect(changed.ok && changed.runs.map((r) => r.id)).toEqual(["makeindex main.idx"]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
