// Correct output through the HTTP API, with real TeX.
import { describe, expect, it } from "vitest";
import { compile, doc, expectPdf, fixture, pdfPages, pdfText } from "./helpers.ts";
import { sharedServer } from "./shared-server.ts";

const s = sharedServer();

describe("hello world", () => {
  for (const engine of ["pdflatex", "xelatex", "lualatex"] as const) {
    it(`${engine}: a valid one-page PDF in one pass`, async () => {
      const r = await compile(s.url, { engine, source: fixture("hello.tex") });
      expectPdf(r);
      expect(r.headers.get("content-type")).toBe("application/pdf");
      expect(r.headers.get("x-engine")).toBe(engine);
      expect(r.headers.get("x-compile-pages")).toBe("1");
      expect(r.headers.get("x-compile-passes")).toBe("1");
      expect(Number(r.headers.get("x-compile-duration-ms"))).toBeGreaterThan(0);
      expect(r.headers.get("x-request-id")).toBeTruthy();
      expect(pdfPages(r.body)).toBe(1);
      expect(r.body.subarray(-8).toString("latin1")).toMatch(/%%EOF\s*$/);
      expect(pdfText(r.body)).toContain("Hello, world!");
    });
  }
});

describe("passes", () => {
  it("resolves a table of contents and \\ref/\\pageref", async () => {
    const source = doc(
      "\\tableofcontents\n\\section{Alpha}\\label{a}\nSee section~\\ref{b} on page~\\pageref{b}.\n\\newpage\n\\section{Beta}\\label{b}\nBack to \\ref{a}.",
    );
    const r = await compile(s.url, { engine: "pdflatex", source });
    expectPdf(r);
    const text = pdfText(r.body);
    expect(text).toMatch(/See section 2 on page 2\./);
    expect(text).toMatch(/Back to 1\./);
    expect(text).toMatch(/1\s+Alpha\s+1/); // the TOC line with its page
    expect(text).toMatch(/2\s+Beta\s+2/);
    expect(text).not.toContain("??");
    expect(Number(r.headers.get("x-compile-passes"))).toBeGreaterThanOrEqual(2);
    expect(Number(r.headers.get("x-compile-passes"))).toBeLessThanOrEqual(3);
    expect(r.headers.get("x-compile-warnings")).toBe("0");
  });

  it("runs bibtex when the aux asks for it and a .bib is given", async () => {
    const source = doc("As shown by \\cite{knuth84}.\n\\bibliographystyle{plain}\n\\bibliography{refs}");
    const r = await compile(s.url, { engine: "pdflatex", source, files: [{ path: "refs.bib", content: fixture("refs.bib"), encoding: "utf8" }] });
    expectPdf(r);
    const text = pdfText(r.body);
    expect(text).toContain("As shown by [1].");
    expect(text).toMatch(/Knuth\. The T\s*E\s*Xbook/);
    expect(r.headers.get("x-compile-bib")).toBe("bibtex");
    expect(r.headers.get("x-compile-passes")).toBe("3");
  });

  it("runs biber for biblatex documents", async () => {
    const source = doc("As shown by \\cite{knuth84}.\n\\printbibliography", "\\usepackage[backend=biber,style=numeric]{biblatex}\n\\addbibresource{refs.bib}\n");
    const r = await compile(s.url, { engine: "lualatex", source, files: [{ path: "refs.bib", content: fixture("refs.bib") }] });
    expectPdf(r);
    const text = pdfText(r.body);
    expect(text).toContain("As shown by [1].");
    expect(text).toMatch(/The T\s*E\s*Xbook/);
    expect(r.headers.get("x-compile-bib")).toBe("biber");
  });

  it("files in subdirectories and base64 files", async () => {
    const source = doc("\\input{chapters/one}\\input{two}");
    const r = await compile(s.url, {
      engine: "pdflatex",
      source,
      files: [
        { path: "chapters/one.tex", content: "Chapter one text.", encoding: "utf8" },
        { path: "two.tex", content: Buffer.from("Chapter two text.").toString("base64"), encoding: "base64" },
      ],
    });
    expectPdf(r);
    expect(pdfText(r.body)).toMatch(/Chapter one text\.\s*Chapter two text\./);
  });
});

describe("unicode", () => {
  const body = "Greek: αβγ Ωμέγα. CJK: 你好世界 日本語.";
  for (const engine of ["xelatex", "lualatex"] as const) {
    it(`${engine}: Greek and CJK with Noto Serif CJK`, async () => {
      const r = await compile(s.url, { engine, source: doc(body, "\\usepackage{fontspec}\n\\setmainfont{Noto Serif CJK SC}\n") });
      expectPdf(r);
      const text = pdfText(r.body);
      expect(text).toContain("αβγ");
      expect(text).toContain("你好世界");
      expect(text).toContain("日本語");
    });
  }
  it("pdflatex: UTF-8 Latin text", async () => {
    const r = await compile(s.url, { engine: "pdflatex", source: doc("Café naïve façade — Zürich", "\\usepackage[T1]{fontenc}\n\\usepackage{lmodern}\n") });
    expectPdf(r);
    expect(pdfText(r.body)).toContain("Café naïve façade");
  });
});

describe("compile errors (422)", () => {
  it("undefined control sequence: message, file and line", async () => {
    const r = await compile(s.url, { engine: "pdflatex", source: "\\documentclass{article}\n\\begin{document}\nok\n\n\\undefinedmacro\n\\end{document}\n" });
    expect(r.status).toBe(422);
    expect(r.json.error.code).toBe("compile_error");
    expect(r.json.error.message).toBe("Undefined control sequence.");
    expect(r.json.error.line).toBe(5);
    expect(r.json.error.file).toBe("main.tex");
    expect(r.json.error.errors.length).toBeGreaterThanOrEqual(1);
    expect(r.json.error.log).toContain("Undefined control sequence");
    expect(r.json.error.log).not.toContain("TEXPOOL");
  });

  it("error in an included file names that file", async () => {
    const r = await compile(s.url, { engine: "xelatex", source: doc("\\input{sub/part}"), files: [{ path: "sub/part.tex", content: "line one\n\\oops\n" }] });
    expect(r.status).toBe(422);
    expect(r.json.error).toMatchObject({ code: "compile_error", file: "sub/part.tex", line: 2 });
  });

  it("missing package: the \\usepackage line", async () => {
    const r = await compile(s.url, { engine: "pdflatex", source: "\\documentclass{article}\n\\usepackage{amsmath}\n\\usepackage{doesnotexist}\n\\begin{document}\nx\n\\end{document}\n" });
    expect(r.status).toBe(422);
    expect(r.json.error.message).toContain("doesnotexist.sty' not found");
    expect(r.json.error.line).toBe(3);
    expect(r.json.error.file).toBe("main.tex");
  });

  it("missing \\end{document}: the end of main.tex", async () => {
    const r = await compile(s.url, { engine: "lualatex", source: "\\documentclass{article}\n\\begin{document}\nno end here\n" });
    expect(r.status).toBe(422);
    expect(r.json.error.message).toMatch(/Missing \\end\{document\}/);
    expect(r.json.error.line).toBe(3);
    expect(r.json.error.file).toBe("main.tex");
  });

  it("a document with errors never answers a PDF, even when TeX could write pages", async () => {
    // the first page is shipped out before the error
    const r = await compile(s.url, { engine: "pdflatex", source: doc("Page one\\newpage Page two \\undefined") });
    expect(r.status).toBe(422);
    expect(r.headers.get("content-type")).toMatch(/json/);
  });

  it("warnings do not fail the compile and are counted", async () => {
    const r = await compile(s.url, { engine: "pdflatex", source: doc("See \\ref{nowhere}.") });
    expectPdf(r);
    expect(Number(r.headers.get("x-compile-warnings"))).toBeGreaterThan(0);
    expect(r.headers.get("x-compile-passes")).toBe("1");
  });
});
