// Programs a document makes the server run (biber above all) take the document's text
// as data, never as code: biber evaluates parts of main.bcf and of the .bib as Perl
// (sourcemap replacements, sort keys, sorting locales, data source types), so a
// document could run commands in the sandbox with shell escape off. Each attack here
// writes pwned.tex, which the document's next pass would print ("OWNED": the shell
// joins OWN''ED, so the attack's own text, which may be printed, never shows the word).
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { checkBcf, MAX_BCF_BYTES, replacementProblem } from "../src/bcf.ts";
import { compile, expectPdf, pdfText } from "./helpers.ts";
import { sharedServer } from "./shared-server.ts";

const BIB = "@book{knuth84, author={Donald E. Knuth}, title={The TeXbook}, publisher={Addison-Wesley}, year={1984}}\n";
/** Prints OWNED when an attack wrote pwned.tex (the job's folder is the sandbox's working directory). */
const PROBE = "\\IfFileExists{pwned.tex}{\\input{pwned.tex}}{CLEAN}";
const WRITE = "qx(echo OWN''ED > pwned.tex)";

function biblatexDoc(preamble: string, body = "\\cite{knuth84}"): string {
  return `\\documentclass{article}\n\\usepackage[backend=biber]{biblatex}\n${preamble}\\addbibresource{refs.bib}\n\\begin{document}\n${PROBE}\n${body}\n\\printbibliography\n\\end{document}\n`;
}

/** A control file as biblatex writes one, cut to what biber needs, with `extra` in it. */
function bcf(extra: string, biberOption = ""): string {
  return `<?xml version="1.0" encoding="UTF-8"?>
<bcf:controlfile version="3.9" bltxversion="3.18b" xmlns:bcf="https://sourceforge.net/projects/biblatex">
  <bcf:options component="biber" type="global">
    <bcf:option type="singlevalued"><bcf:key>output_encoding</bcf:key><bcf:value>utf8</bcf:value></bcf:option>${biberOption}
  </bcf:options>
  ${extra}
  <bcf:bibdata section="0"><bcf:datasource type="file" datatype="bibtex" glob="false">refs.bib</bcf:datasource></bcf:bibdata>
  <bcf:section number="0"><bcf:citekey order="1" intorder="1">knuth84</bcf:citekey></bcf:section>
</bcf:controlfile>
`;
}

/** The main.bcf the installed biblatex writes for biblatexDoc(preamble) (pdflatex run here, outside the server). */
function biblatexBcf(preamble: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), "bcf-"));
  try {
    writeFileSync(path.join(dir, "main.tex"), biblatexDoc(preamble));
    writeFileSync(path.join(dir, "refs.bib"), BIB);
    spawnSync("pdflatex", ["-interaction=nonstopmode", "-no-shell-escape", "main.tex"], { cwd: dir, encoding: "utf8" });
    return readFileSync(path.join(dir, "main.bcf"), "utf8");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A real control file whose one user sourcemap step rewrites the publisher with `replace`. */
function bcfWithReplace(replace: string): string {
  const real = biblatexBcf("\\DeclareSourcemap{\\maps[datatype=bibtex]{\\map{\\step[fieldsource=publisher, match={Addison}, replace={REPLACEME}]}}}\n");
  expect(real).toContain('map_replace="REPLACEME"');
  return real.replace('map_replace="REPLACEME"', `map_replace="${replace}"`);
}

const sourcemap = (replace: string, attr = "map_replace") =>
  `<bcf:sourcemap><bcf:maps datatype="bibtex" level="user"><bcf:map><bcf:map_step map_field_source="title" map_match="The" ${attr}="${replace}"/></bcf:map></bcf:maps></bcf:sourcemap>`;

describe("main.bcf check (bcf.ts)", () => {
  it.each([
    ["Das $1-Buch", "text and a capture"],
    ["\\\\textbf\\{$1\\}", "escaped TeX"],
    ["${1}[x] $1 [y] $1-$2 $12", "captures next to brackets and dashes"],
    ["\\L$1\\E \\u$2 \\$ \\@ \\\"", "case changes and escaped specials"],
    ["$MAPLOOP-$MAPUNIQ", "biber's loop variables (checked again after substitution, in biber)"],
    ["Zürich – ½", "any other character"],
  ])("passes the replacement %s (%s)", (r) => {
    expect(replacementProblem(r)).toBeUndefined();
  });

  it.each([
    ["@{[ system(q(id)) ]}", '"@"'],
    ["${\\ system(q(id))}", '"$"'],
    ['" . system(q(id)) . "', '"""'],
    ["$1[system(q(id))]", "subscript"],
    ["$1{x}", "subscript"],
    ["$1->[0]", "subscript"],
    ["$ENV{HOME}", '"$"'],
    ["$0", '"$"'],
    ["\\N{U+41}", "escape"],
    ["\\x{41}", "escape"],
    ["end\\", "escape"],
    ["`id`\u0001", "control"],
  ])("refuses the replacement %s", (r, why) => {
    expect(replacementProblem(r)).toContain(why);
  });

  it("passes control files as biblatex writes them, with sourcemaps and sorting templates", () => {
    expect(checkBcf(Buffer.from(bcf(sourcemap("Das$1-Buch\\\\textbf\\{$1\\}"))))).toEqual({ ok: true });
    const real = biblatexBcf(
      "\\DeclareSourcemap{\\maps[datatype=bibtex]{\\map{\\step[fieldsource=title, match=\\regexp{The\\s+(\\w+)}, replace=\\regexp{$1 \\\\emph\\{$1\\}}]}}}\n" +
        "\\DeclareSortingTemplate[locale=german]{de}{\\sort{\\field{title}}}\n",
    );
    expect(real).toContain("map_replace=");
    expect(checkBcf(Buffer.from(real))).toEqual({ ok: true });
    expect(checkBcf(Buffer.from(bcfWithReplace("$1 plain text")))).toEqual({ ok: true });
  });

  it.each([
    ["a replacement that runs code", bcf(sourcemap(`@{[ ${WRITE} ]}`)), "sourcemap replacement"],
    ["the same, written with character references", bcf(sourcemap("&#64;{[ qx(id) ]}")), "sourcemap replacement"],
    ["the same, on an attribute with another prefix", bcf(sourcemap("@{[ qx(id) ]}", "x:map_replace")), "sourcemap replacement"],
    ["a regex code block", bcf(sourcemap("x").replace('map_match="The"', 'map_match="(?{ qx(id) })"')), "code block"],
    ["a sorting locale that closes its quote", bcf(`<bcf:sortingtemplate name="x"><bcf:sort order="1" locale="de'.qx(id).'"><bcf:sortitem order="1">title</bcf:sortitem></bcf:sort></bcf:sortingtemplate>`), "sorting locale"],
    ["a data source datatype with code", bcf("").replace('datatype="bibtex"', 'datatype="bibtex;qx(id)"'), "datatype"],
    ["a data source type other than file", bcf("").replace('type="file"', 'type="remote" x="type=&quot;file&quot;"'), "data source type"],
    ["a biber option biblatex never sets", bcf("", "<bcf:option type=\"singlevalued\"><bcf:key>nodieonerror</bcf:key><bcf:value>1</bcf:value></bcf:option>"), "nodieonerror"],
    ["a biber option value with code", bcf("", "<bcf:option type=\"singlevalued\"><bcf:key>sortupper</bcf:key><bcf:value><![CDATA[1).qx(id).(]]></bcf:value></bcf:option>"), "sortupper"],
    ["an entity of a document type declaration", `<?xml version="1.0"?><!DOCTYPE x [<!ENTITY e "@{[qx(id)]}">]>${bcf(sourcemap("&e;"))}`, "document type"],
    ["an unknown entity", bcf(sourcemap("&e;")), "well-formed"],
    ["an unterminated attribute", bcf('<bcf:x a="'), "well-formed"],
  ])("refuses %s", (_name, text, reason) => {
    const r = checkBcf(Buffer.from(text));
    expect(r.ok).toBe(false);
    expect(r.ok ? "" : r.reason).toContain(reason);
  });

  it("refuses a control file over the cap, and scans a large one in linear time", () => {
    expect(checkBcf(Buffer.alloc(MAX_BCF_BYTES + 1, 32)).ok).toBe(false);
    // 2 MiB of attributes (the checked ones decoded) and of unterminated markup: one pass each
    const many = bcf(`<bcf:x ${'map_replace="&amp;$1" x="y" '.repeat(60_000)}/>`);
    const unterminated = `<a b="${"<a ".repeat(600_000)}`;
    const ms = (f: () => void) => {
      const t = performance.now();
      f();
      return performance.now() - t;
    };
    expect(checkBcf(Buffer.from(many))).toEqual({ ok: true });
    expect(checkBcf(Buffer.from(unterminated)).ok).toBe(false);
    // the best of three, as for ordinary markup: one cold run (the decoder not yet compiled, the
    // machine busy) measured 39 times ordinary markup's best on a 2-core machine
    const attack = Math.min(...[1, 2, 3].map(() => ms(() => void (checkBcf(Buffer.from(many)), checkBcf(Buffer.from(unterminated))))));
    // judged against ordinary markup of the same sizes, scanned in the same process just now (a
    // wall-clock bound fails on a loaded machine): a pass per byte costs a small multiple of it,
    // a scan that went back over its input would cost a million times more
    const plain = bcf(`<bcf:x ${'title="An ordinary title" '.repeat(Math.ceil((many.length - bcf("").length) / 26))}/>`);
    const plainText = `<a>${"ab ".repeat(600_000)}</a>`;
    const ordinary = Math.min(...[1, 2, 3].map(() => ms(() => void (checkBcf(Buffer.from(plain)), checkBcf(Buffer.from(plainText))))));
    expect(attack, `ordinary markup of the same sizes: ${ordinary.toFixed(1)} ms`).toBeLessThan(100 * Math.max(ordinary, 5));
  });
});

describe("biber through the server", () => {
  const s = sharedServer();

  const expectBiberRefused = (r: Awaited<ReturnType<typeof compile>>, reason: string) => {
    expect(r.status, r.body.toString().slice(0, 500)).toBe(422);
    expect(r.json.error.code).toBe("compile_error");
    expect(r.json.error.message).toMatch(/^biber: /);
    expect(r.json.error.message).toContain(reason);
  };

  it("a sourcemap replacement that runs a command is refused before biber runs", async () => {
    const map = `\\DeclareSourcemap{\\maps[datatype=bibtex]{\\map{\\step[fieldsource=publisher, match={Addison}, replace={@{[ ${WRITE} ]}}]}}}\n`;
    const r = await compile(s.url, { engine: "pdflatex", source: biblatexDoc(map), files: [{ path: "refs.bib", content: BIB }] });
    expectBiberRefused(r, "sourcemap replacement");
  });

  it("an uploaded main.bcf with such a replacement is refused", async () => {
    const source = `\\documentclass{article}\n\\begin{document}\n${PROBE}\n\\end{document}\n`;
    const r = await compile(s.url, {
      engine: "pdflatex",
      source,
      files: [
        { path: "refs.bib", content: BIB },
        { path: "main.bcf", content: bcfWithReplace(`@{[ ${WRITE} ]}`) },
      ],
    });
    expectBiberRefused(r, "sourcemap replacement");
  });

  it("a .bib field pasted into a replacement ($MAPLOOP) cannot run a command: biber stops", async () => {
    // the .bcf is clean; the code comes from the entry's keywords, which biber substitutes before evaluating
    const map = "\\DeclareSourcemap{\\maps[datatype=bibtex]{\\map[foreach=keywords]{\\step[fieldsource=publisher, match={Addison}, replace={$MAPLOOP}]}}}\n";
    const bib = BIB.replace("year={1984}", `year={1984}, keywords={@{[ ${WRITE} ]}}`);
    const r = await compile(s.url, { engine: "pdflatex", source: biblatexDoc(map), files: [{ path: "refs.bib", content: bib }] });
    expectBiberRefused(r, "is not plain text");
  });

  it("a .bib sort key with an unbalanced brace cannot run a command, and sorts as written", async () => {
    // biber evaluates "...->getSortKey(q{KEY})": a verbatim field's "\{}" closed q{} before
    const bib = `@misc{a, title={Attack}, url={\\{}) && 0 or ${WRITE}; (q{\\}}}\n@misc{b, title={Benign}, url={http://b.example}}\n`;
    const source = biblatexDoc("\\DeclareSortingTemplate{byurl}{\\sort{\\field{url}}}\n", "\\nocite{*}").replace("backend=biber", "backend=biber,sorting=byurl");
    const r = await compile(s.url, { engine: "pdflatex", source, files: [{ path: "refs.bib", content: bib }] });
    expectPdf(r);
    const text = pdfText(r.body);
    expect(text).toContain("CLEAN");
    expect(text).not.toContain("OWNED");
    // "\{..." sorts before "http": the key is the field's own text
    expect(text.indexOf("Attack")).toBeGreaterThan(0);
    expect(text.indexOf("Attack")).toBeLessThan(text.indexOf("Benign"));
  });

  it("regex sourcemaps with $1 captures still rewrite fields", async () => {
    const map =
      "\\DeclareSourcemap{\\maps[datatype=bibtex]{\\map{" +
      "\\step[fieldsource=title, match=\\regexp{The\\s+(\\w+)}, replace=\\regexp{Rewritten-$1-\\\\textbf\\{$1\\}}]" +
      "\\step[fieldsource=publisher, match=\\regexp{(\\w+)-(\\w+)}, replace={$2 and $1}]" +
      "\\step[fieldset=note, fieldvalue={A note set by the map}]" +
      "}}}\n";
    const r = await compile(s.url, { engine: "pdflatex", source: biblatexDoc(map), files: [{ path: "refs.bib", content: BIB }] });
    expectPdf(r);
    expect(r.headers.get("x-compile-bib")).toBe("biber");
    const text = pdfText(r.body).replace(/\s+/g, " ");
    expect(text).toContain("CLEAN");
    expect(text).toContain("Rewritten-TeXbook-TeXbook");
    expect(text).toContain("Wesley and Addison");
    expect(text).toContain("A note set by the map");
  });
});
