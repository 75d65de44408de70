// Projects as they are on disk: any UTF-8 name (spaces, letters of any script, dotfiles, main
// files named .xtx or .ltx), \jobname as the main file's name, `..` from the main file's folder
// inside the project, and a latexmkrc that is read (its common settings honoured), never run.
import { describe, expect, it } from "vitest";
import { compile, expectPdf, pdfText } from "./helpers.ts";
import { sharedServer } from "./shared-server.ts";

const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAEElEQVR4nGP4z8AARAwQCgAf7gP9i18U1AAAAABJRU5ErkJggg==";

// the compile server every job-only test file shares (vitest.config.ts)
const s = sharedServer();

const article = (body: string, preamble = "") => `\\documentclass{article}\n${preamble}\\begin{document}\n${body}\n\\end{document}\n`;
/** pdftotext's words, spaces collapsed. */
const words = (pdf: Buffer) => pdfText(pdf).replace(/\s+/g, " ");

describe("\\jobname", () => {
  // a paper template that prints its own source: the file is found under the job's name
  const paper = article("Job \\jobname. \\lstinputlisting{\\jobname.tex}", "\\usepackage{listings}\n");

  it("is the main file's name at the root (warm pool), and the document reads itself by it", async () => {
    const r = await compile(s.url, { engine: "pdflatex", mainPath: "samplepaper.tex", source: paper });
    expectPdf(r);
    const t = words(r.body);
    expect(t).toContain("Job samplepaper.");
    expect(t).toContain("documentclass"); // its own source, listed
  });

  it("is the main file's name in a subfolder, with biber's files named after it", async () => {
    const source = article("\\cite{k} \\printbibliography", "\\usepackage[backend=biber]{biblatex}\n\\addbibresource{refs.bib}\n");
    const r = await compile(s.url, { engine: "pdflatex", mainPath: "paper/samplepaper.tex", source, files: [{ path: "paper/refs.bib", content: "@book{k, author={Knuth, Donald}, title={The TeXbook}, year=1984}\n" }] });
    expectPdf(r);
    expect(r.headers.get("x-compile-bib")).toBe("biber");
    expect(words(r.body)).toContain("The TeXbook");
  });

  it("of a main file with two dots is its name without the last extension", async () => {
    const r = await compile(s.url, { engine: "pdflatex", mainPath: "thesis.v2.tex", source: article("Job \\jobname.") });
    expectPdf(r);
    expect(words(r.body)).toContain("Job thesis.v2.");
  });
});

describe("names people use", () => {
  it("a main file named .xtx (xelatex) and .ltx", async () => {
    const x = await compile(s.url, { engine: "xelatex", mainPath: "cv.xtx", source: article("Job \\jobname.", "\\usepackage{fontspec}\n") });
    expectPdf(x);
    expect(words(x.body)).toContain("Job cv.");
    const l = await compile(s.url, { engine: "pdflatex", mainPath: "doc/manual.ltx", source: article("Job \\jobname.") });
    expectPdf(l);
    expect(words(l.body)).toContain("Job manual.");
  });

  it("spaces and letters beyond ASCII in folders, files and the main file (pdflatex, xelatex, lualatex)", async () => {
    for (const engine of ["pdflatex", "xelatex", "lualatex"] as const) {
      const r = await compile(s.url, {
        engine,
        mainPath: "Lebenslauf Müller/Lebenslauf-Müller.tex",
        source: article("\\input{Kapitel/Einführung}\n\\includegraphics[width=1cm]{Bilder/Foto 1.png}\nJob \\jobname.", "\\usepackage{graphicx}\n"),
        files: [
          { path: "Lebenslauf Müller/Kapitel/Einführung.tex", content: "Introduction text.\n" },
          { path: "Lebenslauf Müller/Bilder/Foto 1.png", content: PNG, encoding: "base64" },
          { path: ".gitignore", content: "*.aux\n" },
        ],
      });
      expectPdf(r);
      const t = words(r.body);
      expect(t, engine).toContain("Introduction text.");
      expect(t, engine).toContain("Job Lebenslauf-M");
      // xdvipdfmx compresses its objects: the image is seen in pdfTeX's and LuaTeX's output
      if (engine !== "xelatex") expect(r.body.toString("latin1"), engine).toContain("/Subtype /Image");
    }
  });

  it("a main file whose name has a space", async () => {
    const r = await compile(s.url, { engine: "pdflatex", mainPath: "my paper.tex", source: article("Text of my paper.") });
    expectPdf(r);
    expect(words(r.body)).toContain("Text of my paper.");
  });
});

describe("`..` from the main file's folder", () => {
  it.each(["pdflatex", "xelatex", "lualatex"] as const)("%s: reaches files of the project two folders up", async (engine) => {
    const r = await compile(s.url, {
      engine,
      mainPath: "src/en/main.tex",
      source: article("\\input{../../layers/init.tex}\\input{../common}"),
      files: [
        { path: "layers/init.tex", content: "Layer init text.\n" },
        { path: "src/common.tex", content: "Shared one level up.\n" },
      ],
    });
    expectPdf(r);
    const t = words(r.body);
    expect(t).toContain("Layer init text.");
    expect(t).toContain("Shared one level up.");
  });

  it("finds nothing of the job root's parent (other jobs, the server's files)", async () => {
    const r = await compile(s.url, { engine: "pdflatex", mainPath: "a/main.tex", source: article("\\IfFileExists{../../.runtime/sandbox.lua}{LEAK}{SAFE} \\IfFileExists{../../../jobs}{LEAK}{SAFE}") });
    expectPdf(r);
    expect(words(r.body)).toContain("SAFE SAFE");
  });
});

describe("refused names", () => {
  it.each([
    ["../x.tex", "must not contain .."],
    ["a/../../x.tex", "must not contain .."],
    ["/etc/passwd", "must be relative"],
    ["a\\b.tex", "no backslash"],
    ["a\u0000b.tex", "control"],
    ["a\nb.tex", "control"],
    ["a\u202eb.tex", "bidirectional"],
    ["\ud800x.tex", "well-formed Unicode"],
    [".texmf-var/luatex-cache/x.lua", "folder of the compile server's"],
    [" lead.tex", "begin or end with a space"],
    ["a//b.tex", "normalised"],
  ])("a file named %j is a 400", async (path, message) => {
    const r = await compile(s.url, { engine: "pdflatex", source: article("x"), files: [{ path, content: "x" }] });
    expect(r.status).toBe(400);
    expect(r.json.error.message).toContain(message);
  });

  it.each([
    ["paper", "must name a file with an extension"],
    ["paper.log", "must not have the extension .log"],
    ["paper{x}.tex", "must not contain"],
    ["a\\input{x}.tex", "no backslash"],
    ["p%q.tex", "must not contain"],
  ])("a main file named %j is a 400", async (mainPath, message) => {
    const r = await compile(s.url, { engine: "pdflatex", mainPath, source: article("x") });
    expect(r.status).toBe(400);
    expect(r.json.error.message).toContain(message);
  });
});

describe("latexmkrc", () => {
  it("names the main file and the engine, adds input folders, and is never run", async () => {
    const rc = [
      "# the project's build settings",
      "@default_files = ('thesis.tex');",
      "$pdf_mode = 5;  # xelatex",
      "ensure_path('TEXINPUTS', './styles//');",
      "$ENV{'BSTINPUTS'} = './bst:' . ($ENV{'BSTINPUTS'} || '');",
      "system('echo pwned > pwned.tex');",
      "$out_dir = 'build';",
      "sub my_dep { system(\"rm -rf /\"); }",
    ].join("\n");
    const r = await compile(s.url, {
      source: article("Engine: \\ifdefined\\XeTeXversion XeTeX\\else other\\fi. Job \\jobname. \\thesisstyle{} \\IfFileExists{pwned.tex}{PWNED}{SAFE}", "\\usepackage{thesisstyle}\n"),
      files: [
        { path: ".latexmkrc", content: rc },
        { path: "styles/local/thesisstyle.sty", content: "\\ProvidesPackage{thesisstyle}\\newcommand\\thesisstyle{Style from styles/local.}\n" },
      ],
    });
    expectPdf(r);
    expect(r.headers.get("x-engine")).toBe("xelatex");
    const t = words(r.body);
    expect(t).toContain("Engine: XeTeX.");
    expect(t).toContain("Job thesis.");
    expect(t).toContain("Style from styles/local.");
    expect(t).toContain("SAFE");
    const ignored = decodeURIComponent(r.headers.get("x-compile-project-warnings") ?? "");
    expect(ignored).toContain("system('echo pwned > pwned.tex')");
    expect(ignored).toContain("$out_dir");
    expect(ignored).toContain("sub my_dep");
  });

  it("the request's own engine and main path win over it (and the difference is reported)", async () => {
    const r = await compile(s.url, {
      engine: "pdflatex",
      mainPath: "main.tex",
      source: article("Job \\jobname. \\ifdefined\\XeTeXversion XeTeX\\else pdfTeX\\fi."),
      files: [{ path: "latexmkrc", content: "@default_files = ('other.tex');\n$pdf_mode = 5;\n" }],
    });
    expectPdf(r);
    expect(words(r.body)).toContain("Job main. pdfTeX.");
    const ignored = decodeURIComponent(r.headers.get("x-compile-project-warnings") ?? "");
    expect(ignored).toContain("the engine xelatex");
    expect(ignored).toContain("@default_files");
  });

  it("`$pdflatex = 'lualatex %O %S'` runs lualatex", async () => {
    const r = await compile(s.url, { source: article("\\ifdefined\\directlua LuaTeX\\else other\\fi."), files: [{ path: "latexmkrc", content: "$pdflatex = 'lualatex -shell-escape %O %S';\n" }] });
    expectPdf(r);
    expect(r.headers.get("x-engine")).toBe("lualatex");
    expect(words(r.body)).toContain("LuaTeX.");
    // shell escape is the request's choice, never the latexmkrc's
    expect(decodeURIComponent(r.headers.get("x-compile-project-warnings") ?? "")).toContain("-shell-escape");
  });

  it("a search folder outside the project or a default file with .. is ignored, not followed", async () => {
    const r = await compile(s.url, {
      source: article("Job \\jobname."),
      files: [{ path: "latexmkrc", content: "ensure_path('TEXINPUTS', '../../etc//', '/usr/share//');\n@default_files = ('../escape.tex');\n" }],
    });
    expectPdf(r);
    expect(words(r.body)).toContain("Job main.");
    const ignored = decodeURIComponent(r.headers.get("x-compile-project-warnings") ?? "");
    expect(ignored).toContain("../../etc//");
    expect(ignored).toContain("@default_files");
  });
});
