// xindy evaluates what it reads (its style modules, and glossaries' raw index read with `-I
// xindy`) as Lisp, so a document without shell escape could run programs through it by writing
// a `.xdy` or a `.glo`. Only plain xindy data reaches it (src/xdy.ts). Each attack writes
// pwned.tex, which the document's next pass would print ("OWNED": the shell joins OWN''ED, so the
// attack's own text never shows the word), and glossaries' real files still pass.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningServer } from "../src/server.ts";
import { checkXdy } from "../src/xdy.ts";
import { compile, expectPdf, pdfText, testServer } from "./helpers.ts";

const PROBE = "\\IfFileExists{pwned.tex}{\\input{pwned.tex}}{CLEAN}";
const RUN = `(ext:run-program "sh" :arguments (list "-c" "echo OWN''ED > pwned.tex"))`;

/**
 * A glossaries document (xindy option) that, after \makeglossaries, writes `name` with `text`;
 * with `noist`, glossaries leaves the style (main.xdy) to the document.
 */
function glossaryDoc(name: string, text: string, noist = false): string {
  return [
    "\\documentclass{article}",
    "\\usepackage[xindy]{glossaries}",
    ...(noist ? ["\\noist"] : []),
    "\\makeglossaries",
    "\\newglossaryentry{cat}{name={cat},description={a small feline}}",
    // \detokenize keeps the Lisp as it is; # and ~ written as characters
    `\\newwrite\\evil\\immediate\\openout\\evil=${name}\\immediate\\write\\evil{\\detokenize{${text}}}\\immediate\\closeout\\evil`,
    "\\begin{document}",
    PROBE,
    "\\gls{cat}",
    "\\printglossaries",
    "\\end{document}",
  ].join("\n");
}

/** The files glossaries writes for a small document, made by the installed TeX outside the server. */
function glossariesFiles(): { xdy: string; glo: string } {
  const dir = mkdtempSync(path.join(tmpdir(), "xdy-"));
  try {
    const src = glossaryDoc("unused.txt", "x").replace('{cat}{name={cat}', '{cat}{name={"quoted" cat \\textbf{b}}');
    writeFileSync(path.join(dir, "main.tex"), src);
    spawnSync("pdflatex", ["-interaction=nonstopmode", "-no-shell-escape", "main.tex"], { cwd: dir, encoding: "utf8" });
    return { xdy: readFileSync(path.join(dir, "main.xdy"), "utf8"), glo: readFileSync(path.join(dir, "main.glo"), "utf8") };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe("the check (src/xdy.ts)", () => {
  it("passes the style and raw index glossaries writes", () => {
    const { xdy, glo } = glossariesFiles();
    expect(xdy).toContain("(markup-index");
    expect(glo).toContain("(indexentry");
    expect(checkXdy(xdy, "style")).toMatchObject({ ok: true, requires: ["tex.xdy"] });
    expect(checkXdy(glo, "raw")).toMatchObject({ ok: true });
  });
  it("refuses calls, reader macros, foreign symbols and modules that are not .xdy files", () => {
    const style: Array<[string, RegExp]> = [
      [RUN, /another package/],
      ['(run-program "sh")', /not a xindy command/],
      ['(markup-index :open (shell "id"))', /a call inside a form/],
      [`(markup-index :open ${RUN})`, /another package/],
      ['(markup-index :open #.(ext:shell "id"))', /reader macro/],
      ["(define-attributes (('x)))", /reader macro/],
      ['(markup-index :open "x" :close `y)', /reader macro/],
      ["(markup-index :open ext:*x*)", /another package/],
      ['(require "pwn.lisp")', /not a \.xdy file/],
      ['(require "../x.xdy")', /not a \.xdy file/],
      ['(require "/etc/x.xdy")', /not a \.xdy file/],
      // a style's strings end at the next quote: what follows \" is read as code by xindy
      ['(markup-index :open "a\\" (shell "id") "")', /a call inside a form/],
      ["(markup-index", /never ends/],
      ['"loose"', /outside a form/],
    ];
    for (const [text, why] of style) expect(checkXdy(text, "style").reason, text).toMatch(why);
    expect(checkXdy(RUN, "raw").reason).toMatch(/another package/);
    expect(checkXdy('(run-program "sh")', "raw").reason).toMatch(/not an index entry/);
    expect(checkXdy('(indexentry :tkey (("a" #.(ext:shell "id"))))', "raw").reason).toMatch(/reader macro/);
    // the raw index is read with escapes: this is one string, data
    expect(checkXdy('(indexentry :tkey (("a\\" (ext:shell x) \\"" "b")) :locref "{}{1}")', "raw").ok).toBe(true);
    const deep = "(markup-index " + "(".repeat(100) + ")".repeat(101);
    expect(checkXdy(deep, "style").reason).toMatch(/nested/);
  });
  it("is linear: one 16 MiB text costs about what sixteen 1 MiB texts cost, not 16 times more", () => {
    // Same bytes both ways, measured in turns, so a busy machine slows both alike: linear gives
    // about 1, quadratic 16.
    const unit = '(define-attributes (("a" "b" "c")) :x 1)\n';
    const text = (bytes: number) => unit.repeat(Math.floor(bytes / unit.length));
    const small = text(1024 * 1024);
    const large = text(16 * 1024 * 1024); // the tool input cap
    let sixteenSmall = Infinity;
    let oneLarge = Infinity;
    for (let k = 0; k < 5; k++) {
      let t0 = performance.now();
      for (let r = 0; r < 16; r++) expect(checkXdy(small, "style").ok).toBe(true);
      sixteenSmall = Math.min(sixteenSmall, performance.now() - t0);
      t0 = performance.now();
      expect(checkXdy(large, "style").ok).toBe(true);
      oneLarge = Math.min(oneLarge, performance.now() - t0);
    }
    expect(oneLarge / sixteenSmall).toBeLessThan(4);
  }, 60_000);
});

describe("through the server", () => {
  let s: RunningServer;
  beforeAll(async () => {
    s = await testServer({ poolSize: { pdflatex: 2, xelatex: 0, lualatex: 0 } });
  }, 120_000);
  afterAll(async () => {
    await s?.close();
  });

  it("glossaries with the xindy option still makes its glossary", async () => {
    const r = await compile(s.url, { engine: "pdflatex", source: glossaryDoc("notes.txt", "harmless") });
    expectPdf(r);
    const text = pdfText(r.body);
    expect(text).toContain("a small feline");
    expect(text).toContain("CLEAN");
    expect(r.headers.get("x-compile-tools")).toContain("xindy");
  }, 60_000);

  const attacks: Array<[string, string, string, RegExp]> = [
    ["a style module the document writes", "main.xdy", `(require "tex.xdy") (markup-index :open "x") ${RUN}`, /^xindy: main\.xdy: a symbol of another package/],
    ["a style module it requires", "main.xdy", '(require "tex.xdy") (require "extra.xdy")', /^xindy: extra\.xdy: a symbol of another package/],
    ["read-time evaluation in the raw index", "main.glo", `(indexentry :tkey (("x" "x")) :locref #.${RUN})`, /^xindy: main\.glo: /],
  ];
  for (const [what, name, text, why] of attacks) {
    it(`${what}: a 422 naming xindy, and nothing ran`, async () => {
      let source = glossaryDoc(name, text, name === "main.xdy");
      // the required module carries the call
      if (text.includes("extra.xdy")) source = source.replace("\\begin{document}", `\\newwrite\\more\\immediate\\openout\\more=extra.xdy\\immediate\\write\\more{\\detokenize{${RUN}}}\\immediate\\closeout\\more\n\\begin{document}`);
      const r = await compile(s.url, { engine: "pdflatex", source });
      expect(r.status).toBe(422);
      expect(r.json.error.message).toMatch(why);
      expect(JSON.stringify(r.json)).not.toContain("OWNED");
    }, 60_000);
  }
});
