// Projects as people lay them out: the main file in a subfolder (mainPath), files found
// from its folder and from the project root, and draft compiles (images as boxes).
import { describe, expect, it } from "vitest";
import { compile, expectPdf, fixture, pdfPages, pdfText } from "./helpers.ts";
import { sharedServer } from "./shared-server.ts";

// a 2x2 red PNG
const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAEElEQVR4nGP4z8AARAwQCgAf7gP9i18U1AAAAABJRU5ErkJggg==";
const bib = fixture("refs.bib");

const s = sharedServer();

/** A thesis laid out as on Overleaf: main file in thesis/, shared files at the root. */
function thesis(body: string, extra: Array<{ path: string; content: string; encoding?: string }> = []) {
  return {
    engine: "pdflatex",
    mainPath: "thesis/thesis.tex",
    source: `\\documentclass{article}\n\\usepackage{graphicx}\n\\begin{document}\n${body}\n\\end{document}\n`,
    files: [
      { path: "thesis/chapters/one.tex", content: "Chapter one from the main folder.\n" },
      { path: "thesis/appendix.tex", content: "\\section{Appendix}Appendix text.\n" },
      { path: "common/shared.tex", content: "Shared text from the project root.\n" },
      { path: "figs/dot.png", content: PNG, encoding: "base64" },
      { path: "refs.bib", content: bib },
      ...extra,
    ],
  };
}

describe("mainPath", () => {
  it("finds \\input, \\include, \\includegraphics and \\bibliography from the main file's folder and from the root", async () => {
    const r = await compile(
      s.url,
      thesis("\\input{chapters/one}\n\\input{common/shared}\n\\includegraphics[width=1cm]{figs/dot.png}\nSee \\cite{knuth84}.\n\\include{appendix}\n\\bibliographystyle{plain}\n\\bibliography{refs}"),
    );
    expectPdf(r);
    const text = pdfText(r.body);
    expect(text).toContain("Chapter one from the main folder.");
    expect(text).toContain("Shared text from the project root.");
    expect(text).toContain("Appendix text.");
    expect(text).toContain("[1]"); // the citation resolved: bibtex ran where the .aux is
    expect(text).toContain("Knuth");
    expect(r.headers.get("x-compile-bib")).toBe("bibtex");
    expect(pdfPages(r.body)).toBe(3); // \include clears the page before and after
  });

  it("names a failing file by its project path", async () => {
    const r = await compile(s.url, thesis("\\input{chapters/bad}", [{ path: "thesis/chapters/bad.tex", content: "ok\n\\undefinedmacro\n" }]));
    expect(r.status).toBe(422);
    expect(r.json.error.file).toBe("thesis/chapters/bad.tex");
    expect(r.json.error.line).toBe(2);
  });

  it("an error in the main file names mainPath", async () => {
    const r = await compile(s.url, thesis("\\nosuchmacro"));
    expect(r.status).toBe(422);
    expect(r.json.error.file).toBe("thesis/thesis.tex");
    expect(r.json.error.line).toBe(4);
  });

  it("a main file at the root under another name (warm pool)", async () => {
    const r = await compile(s.url, { engine: "pdflatex", mainPath: "paper.tex", source: "\\documentclass{article}\\begin{document}Paper \\jobname.\\end{document}", files: [{ path: "main.tex", content: "not the main file" }] });
    expectPdf(r);
    expect(pdfText(r.body)).toContain("Paper paper."); // \jobname is the main file's name, as with a bare engine
  });

  for (const engine of ["xelatex", "lualatex"] as const) {
    it(`${engine}: main file in a subfolder`, async () => {
      const r = await compile(s.url, { ...thesis("\\input{chapters/one}\\input{common/shared}\\includegraphics[width=1cm]{figs/dot.png}"), engine });
      expectPdf(r);
      expect(pdfText(r.body)).toContain("Shared text from the project root.");
    });
  }

  // as Overleaf resolves \addbibresource: from the main file's folder, else from the project root
  // (side by side: the server runs two pdflatex jobs at once, and biber is slow to start)
  it.concurrent.each([
    ["refs.bib", "refs.bib", "the project root"],
    ["thesis/refs.bib", "refs.bib", "the main file's folder"],
    ["refs.bib", "../refs.bib", "a path relative to the main file"],
    ["bib/refs.bib", "bib/refs.bib", "a folder of the project root"],
  ])("biber: main file in a subfolder, the .bib at %s, \\addbibresource{%s} (%s)", async (bibPath, resource) => {
    const source = `\\documentclass{article}\n\\usepackage[backend=biber]{biblatex}\n\\addbibresource{${resource}}\n\\begin{document}\nSee \\cite{knuth84}.\n\\printbibliography\n\\end{document}\n`;
    const r = await compile(s.url, { engine: "pdflatex", mainPath: "thesis/thesis.tex", source, files: [{ path: bibPath, content: bib }] });
    expectPdf(r);
    expect(r.headers.get("x-compile-bib")).toBe("biber");
    const text = pdfText(r.body);
    expect(text).toContain("[1]");
    expect(text).toContain("Addison-Wesley"); // the entry, from the .bib
  });

  it("biber: a data source outside the project is refused", async () => {
    const source = "\\documentclass{article}\n\\usepackage[backend=biber]{biblatex}\n\\addbibresource{../../refs.bib}\n\\begin{document}\n\\cite{knuth84}\n\\end{document}\n";
    const r = await compile(s.url, { engine: "pdflatex", mainPath: "thesis/thesis.tex", source, files: [{ path: "refs.bib", content: bib }] });
    expect(r.status).toBe(422);
    expect(r.json.error.message).toContain('biber data source "../../refs.bib"');
  });

  it.each([
    ["../main.tex", "must not contain .."],
    ["/abs/main.tex", "must be relative"],
    ["thesis/main", "must name a file with an extension"],
    ["a/./b.tex", "must be normalised"],
    [".texmf-var/b.tex", ".texmf-var is a folder of the compile server's"],
    ["x".repeat(400) + ".tex", "must be at most 400 characters"],
  ])("rejects mainPath %s", async (mainPath, message) => {
    const r = await compile(s.url, { engine: "pdflatex", mainPath, source: "x" });
    expect(r.status).toBe(400);
    expect(r.json.error.message).toContain(`mainPath: ${message}`);
  });

  it("rejects a file at mainPath, and a file where mainPath needs a folder", async () => {
    const clash = await compile(s.url, { engine: "pdflatex", mainPath: "a/b.tex", source: "x", files: [{ path: "A/b.tex", content: "y" }] });
    expect(clash.status).toBe(400);
    expect(clash.json.error.message).toContain("is the main file");
    const dir = await compile(s.url, { engine: "pdflatex", mainPath: "a/b.tex", source: "x", files: [{ path: "a", content: "y" }] });
    expect(dir.status).toBe(400);
    expect(dir.json.error.message).toContain("both a file and a directory");
  });
});

describe("draft", () => {
  const src = "\\documentclass{article}\\usepackage{graphicx}\\begin{document}Figure: \\includegraphics[width=3cm]{dot.png}\\end{document}";
  const files = [{ path: "dot.png", content: PNG, encoding: "base64" }];

  it("draws images as boxes with their names, and reads no image", async () => {
    const draft = await compile(s.url, { engine: "pdflatex", source: src, files, draft: true });
    expectPdf(draft);
    expect(pdfText(draft.body)).toContain("dot.png");
    const final = await compile(s.url, { engine: "pdflatex", source: src, files });
    expectPdf(final);
    expect(pdfText(final.body)).not.toContain("dot.png");
    expect(final.body.toString("latin1")).toContain("/Subtype /Image");
    expect(draft.body.toString("latin1")).not.toContain("/Subtype /Image");
    // a draft compile does not need the image at all
    const missing = await compile(s.url, { engine: "pdflatex", source: src, draft: true });
    expectPdf(missing);
  });

  it("xelatex: draft too", async () => {
    const r = await compile(s.url, { engine: "xelatex", source: src, files, draft: true });
    expectPdf(r);
    expect(pdfText(r.body)).toContain("dot.png");
  });

  it("rejects a non-boolean draft", async () => {
    const r = await compile(s.url, { engine: "pdflatex", source: src, draft: "yes" });
    expect(r.status).toBe(400);
    expect(r.json.error.message).toContain("draft: must be a boolean");
  });
});
