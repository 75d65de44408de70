// Tools between passes, as latexmk runs them, with real documents: the PDF's text
// proves each index, glossary, nomenclature and bibliography is there.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { planTools } from "../src/passes.ts";
import { compile, doc, expectPdf, fixture, pdfText, type Result } from "./helpers.ts";
import { sharedServer } from "./shared-server.ts";

const s = sharedServer();

type Request = { source: string; engine?: string; files?: { path: string; content: string; encoding: string }[] };

const utf8 = (path: string, content: string) => ({ path, content, encoding: "utf8" });
const passes = (r: { headers: Headers }) => Number(r.headers.get("x-compile-passes"));
const tools = (r: { headers: Headers }) => r.headers.get("x-compile-tools") ?? "";

/**
 * Compiles (pdflatex unless the request names an engine), expects a PDF whose text
 * (pdftotext's, runs of blanks made single spaces) contains every string and matches
 * every pattern of `wanted`; gives the response and that text.
 */
async function pdfWith(req: Request, wanted: (string | RegExp)[]): Promise<{ r: Result; t: string }> {
  const r = await compile(s.url, { engine: "pdflatex", ...req });
  expectPdf(r);
  const t = pdfText(r.body).replace(/[ \t]+/g, " ");
  for (const w of wanted) {
    if (typeof w === "string") expect(t).toContain(w);
    else expect(t).toMatch(w);
  }
  return { r, t };
}

/** Compiles (pdflatex unless named), expects a 422 compile error whose message matches. */
async function refused(req: Request, message: string | RegExp): Promise<void> {
  const r = await compile(s.url, { engine: "pdflatex", ...req });
  expect(r.status).toBe(422);
  expect(r.json?.error?.code).toBe("compile_error");
  if (typeof message === "string") expect(r.json.error.message).toContain(message);
  else expect(r.json.error.message).toMatch(message);
}

const body = [
  "Apples\\index{apple} and pears\\index{pear}.",
  "\\newpage",
  "More apples\\index{apple} and a banana\\index{banana!ripe}.",
].join("\n");
const makeidx = (preamble: string) => doc(`${body}\n\\printindex`, preamble);

describe("indexes (makeindex)", () => {
  it("makeidx: the index is built, with the right pages", async () => {
    const { r } = await pdfWith({ source: makeidx("\\usepackage{makeidx}\n\\makeindex\n") }, ["Index", /apple, 1, 2/, /pear, 1/, /ripe, 2/]);
    expect(tools(r)).toBe("makeindex");
    expect(passes(r)).toBe(2);
  });

  const customIst = 'delim_0 " :: "\nheadings_flag 1\nheading_prefix "\\\\textbf{Letter "\nheading_suffix "}\\\\par\\\\nopagebreak\\n"\n';

  it("imakeidx: the style given in \\makeindex[options=-s ...] (a project file) is used", async () => {
    await pdfWith(
      { engine: "xelatex", source: makeidx("\\usepackage{imakeidx}\n\\makeindex[options=-s styles/custom.ist]\n"), files: [utf8("styles/custom.ist", customIst)] },
      [/apple :: 1, 2/, "Letter A", "Letter P"],
    );
  });

  it("makeidx: the style named by the project's latexmkrc is used", async () => {
    await pdfWith(
      {
        source: makeidx("\\usepackage{makeidx}\n\\makeindex\n"),
        files: [utf8("custom.ist", customIst), utf8("latexmkrc", "$makeindex = 'makeindex -s custom.ist %O -o %D %S';\n")],
      },
      [/apple :: 1, 2/],
    );
  });

  it("several indexes (imakeidx name=...), each built", async () => {
    const source = doc(
      "Knuth\\index[persons]{Knuth} wrote \\TeX\\index{TeX}; Lamport\\index[persons]{Lamport} wrote \\LaTeX\\index{LaTeX}.\n\\printindex\n\\printindex[persons]",
      "\\usepackage{imakeidx}\n\\makeindex\n\\makeindex[name=persons,title=Index of persons]\n",
    );
    await pdfWith({ engine: "lualatex", source }, ["Index of persons", /Knuth, 1/, /Lamport, 1/, /LaTeX, 1/]);
  });

  it("a style file that does not exist: 422 naming it", async () => {
    await refused({ source: makeidx("\\usepackage{imakeidx}\n\\makeindex[options=-s nosuch.ist]\n") }, /^makeindex: .*nosuch\.ist/);
  });

  it("a style outside the project is refused before makeindex runs", async () => {
    await refused({ source: makeidx("\\usepackage{imakeidx}\n\\makeindex[options=-s ../../etc/x.ist]\n") }, "makeindex style");
  });

  it("no index entries, no \\makeindex: makeindex never runs", async () => {
    const { r } = await pdfWith({ source: doc("Plain text.") }, []);
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
    const { r } = await pdfWith({ source }, [
      "Glossary",
      "Acronyms",
      /LaTeX A document preparation system\. 1/,
      /TeX A typesetting program by Knuth\. 1/,
      /API application programming interface\. 1/,
    ]);
    expect(tools(r)).toBe("makeindex");
  });

  it("nomencl: the .nlo becomes the list with nomencl.ist", async () => {
    const source = doc(
      "Energy $E = mc^2$\\nomenclature{$c$}{Speed of light in vacuum}\\nomenclature{$E$}{Energy}.\n\\printnomenclature",
      "\\usepackage{nomencl}\n\\makenomenclature\n",
    );
    await pdfWith({ source }, ["Nomenclature", "Speed of light in vacuum", /E\s+Energy/]);
  });
});

describe("index tools beyond makeindex", () => {
  it("imakeidx with xindy: texindy builds the index (German sorting of Ä)", async () => {
    const source = doc(
      "Äpfel\\index{Äpfel} und Birnen\\index{Birnen}, Zebras\\index{Zebra}.\n\\newpage\nMehr Äpfel\\index{Äpfel}.\n\\printindex",
      "\\usepackage[T1]{fontenc}\n\\usepackage[xindy]{imakeidx}\n\\makeindex[options=-L german-din5007 -C utf8]\n",
    );
    const { r, t } = await pdfWith({ source }, [/Äpfel, 1, 2/, /Zebra, 1/]);
    expect(tools(r)).toBe("xindy");
    // German order: Ä with A, before B
    expect(t.indexOf("Äpfel, 1")).toBeLessThan(t.indexOf("Birnen, 1"));
  });

  it("imakeidx with xindy: an option outside the allowed set is a 422 before xindy runs", async () => {
    const source = doc("A\\index{a}.\n\\printindex", "\\usepackage[xindy]{imakeidx}\n\\makeindex[options=-M /etc/passwd]\n");
    await refused({ source }, "xindy options for main.idx are not allowed");
  });

  it("glossaries with the xindy option: xindy makes the glossary as makeglossaries would", async () => {
    const source = doc(
      "A \\gls{lattice} and a \\gls{poset}.\n\\printglossaries",
      "\\usepackage[xindy]{glossaries}\n\\makeglossaries\n\\newglossaryentry{lattice}{name=lattice,description={a poset with joins and meets}}\n\\newglossaryentry{poset}{name=poset,description={a partially ordered set}}\n",
    );
    const { r } = await pdfWith({ source }, ["Glossary", /lattice a poset with joins and meets\. 1/, /poset a partially ordered set\. 1/]);
    expect(tools(r)).toBe("xindy");
  });

  it("splitidx: splitindex splits the raw index, each index is built", async () => {
    const source = doc(
      "Knuth\\sindex[per]{Knuth} wrote \\TeX\\sindex{TeX}; Lamport\\sindex[per]{Lamport} wrote \\LaTeX\\sindex{LaTeX}.\n\\printindex[idx]\n\\printindex[per]",
      "\\usepackage{splitidx}\n\\makeindex\n\\newindex[General index]{idx}\n\\newindex[Index of persons]{per}\n",
    );
    const { r, t } = await pdfWith({ source }, ["General index", "Index of persons", /Lamport, 1/, /LaTeX, 1/]);
    expect(tools(r).split(",").sort()).toEqual(["makeindex", "splitindex"]);
    expect(t.indexOf("LaTeX, 1")).toBeLessThan(t.indexOf("Index of persons"));
    expect(t.indexOf("Index of persons")).toBeLessThan(t.indexOf("Knuth, 1"));
    // one engine pass, splitindex and makeindex, the pass that reads the indexes
    expect(passes(r)).toBe(2);
  });

  it("glossaries-extra with record (bib2gls): a 422 naming the missing tool", async () => {
    const source = doc("\\gls{x}.\n\\printunsrtglossaries", "\\usepackage[record]{glossaries-extra}\n\\GlsXtrLoadResources[src=terms]\n");
    await refused({ source, files: [utf8("terms.bib", "@entry{x, name={x}, description={an unknown}}\n")] }, "needs bib2gls");
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
  const files = [utf8("refs.bib", bib)];

  it("multibib: bibtex runs for each .aux that names a database", async () => {
    const source = doc(
      "Printed \\cite{knuth84}; online \\citeweb{w3c}.\n\\bibliographystyle{plain}\\bibliography{refs}\n\\bibliographystyleweb{plain}\\bibliographyweb{refs}",
      "\\usepackage{multibib}\n\\newcites{web}{Web sources}\n",
    );
    // plain.bst lowercases titles
    const { r } = await pdfWith({ source, files }, ["Printed [1]; online [2].", /The T\s*E\s*Xbook/, "Web sources", "Html living standard"]);
    expect(r.headers.get("x-compile-bib")).toBe("bibtex");
  });

  it("a bibliography, an index and a glossary in one document, within the pass limit", async () => {
    const source = doc(
      "\\section{One}\\label{one}See \\cite{knuth84}, \\gls{tex}, section~\\ref{one}\\index{section}.\n\\printglossaries\n\\bibliographystyle{plain}\\bibliography{refs}\n\\printindex",
      "\\usepackage{makeidx}\\makeindex\n\\usepackage{glossaries}\\makeglossaries\n\\newglossaryentry{tex}{name=TeX,description={A typesetting program}}\n",
    );
    const { r } = await pdfWith({ source, files }, ["See [1], TeX, section 1", /section, 1/, "A typesetting program", /The T\s*E\s*Xbook/]);
    expect(tools(r).split(",").sort()).toEqual(["bibtex", "makeindex"]);
    expect(passes(r)).toBeLessThanOrEqual(4);
  });

  it("bibtex: a missing database is a 422 naming it", async () => {
    const source = doc("\\cite{knuth84}\n\\bibliographystyle{plain}\\bibliography{nosuch}");
    await refused({ source, files }, /^bibtex: I couldn't open database file nosuch\.bib/);
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
