// The packages real projects use: one small document per package (or class), on
// each engine it is meant for, through the compile server. Each PDF must have its
// marker text. Packages that go together are compiled as one document per batch and
// engine (BATCHES); a row whose batch fails, or whose marker is missing from it, is
// compiled alone, and the batch's own test names the rows that fail alone (or says that
// only their combination fails).
import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { compile, expectPdf, pdfText } from "./helpers.ts";
import { sharedServer } from "./shared-server.ts";

type Engine = "pdflatex" | "xelatex" | "lualatex";
const ALL: Engine[] = ["pdflatex", "xelatex", "lualatex"];
const PDF: Engine[] = ["pdflatex"];
const UNICODE: Engine[] = ["xelatex", "lualatex"];

interface Row {
  name: string;
  engines: Engine[];
  preamble?: string;
  body: string;
  cls?: string;
  /** the whole document, when the class needs more than \documentclass{cls} */
  source?: string;
}

const ROWS: Row[] = [
  { name: "amsmath", engines: ALL, preamble: "\\usepackage{amsmath}", body: "\\begin{align} a &= b + c \\\\ d &= e \\end{align}" },
  { name: "amssymb", engines: ALL, preamble: "\\usepackage{amssymb}", body: "$\\mathbb{R} \\subsetneq \\mathbb{C}$" },
  { name: "amsthm", engines: ALL, preamble: "\\usepackage{amsthm}\\newtheorem{thm}{Theorem}", body: "\\begin{thm}Every thing.\\end{thm}\\begin{proof}Trivial.\\end{proof}" },
  { name: "mathtools", engines: ALL, preamble: "\\usepackage{mathtools}\\DeclarePairedDelimiter\\abs{\\lvert}{\\rvert}", body: "$x \\coloneqq \\abs{y}$" },
  { name: "graphicx", engines: ALL, preamble: "\\usepackage{graphicx}", body: "\\includegraphics[width=3cm]{example-image}" },
  { name: "hyperref", engines: ALL, preamble: "\\usepackage{hyperref}", body: "\\section{S}\\label{s}\\href{https://example.org}{a link} and \\autoref{s}" },
  { name: "geometry", engines: ALL, preamble: "\\usepackage[a5paper,margin=1cm]{geometry}", body: "Small pages." },
  { name: "xcolor", engines: ALL, preamble: "\\usepackage[dvipsnames]{xcolor}", body: "\\textcolor{ForestGreen}{green} \\colorbox{yellow}{box}" },
  { name: "tikz", engines: ALL, preamble: "\\usepackage{tikz}\\usetikzlibrary{arrows.meta,positioning}", body: "\\begin{tikzpicture}\\node[draw](a){A};\\node[draw,right=of a](b){B};\\draw[-Stealth](a)--(b);\\end{tikzpicture}" },
  { name: "pgfplots", engines: ALL, preamble: "\\usepackage{pgfplots}\\pgfplotsset{compat=1.18}", body: "\\begin{tikzpicture}\\begin{axis}[width=5cm]\\addplot[domain=-2:2]{x^2};\\end{axis}\\end{tikzpicture}" },
  { name: "tikz-cd", engines: PDF, preamble: "\\usepackage{tikz-cd}", body: "\\begin{tikzcd} A \\arrow[r] & B \\end{tikzcd}" },
  { name: "circuitikz", engines: PDF, preamble: "\\usepackage{circuitikz}", body: "\\begin{circuitikz}\\draw (0,0) to[R=$R_1$] (2,0);\\end{circuitikz}" },
  { name: "booktabs", engines: ALL, preamble: "\\usepackage{booktabs}", body: "\\begin{tabular}{ll}\\toprule A & B\\\\\\midrule 1 & 2\\\\\\bottomrule\\end{tabular}" },
  { name: "tabularx", engines: PDF, preamble: "\\usepackage{tabularx}", body: "\\begin{tabularx}{\\linewidth}{lX}a & long text\\end{tabularx}" },
  { name: "longtable", engines: PDF, preamble: "\\usepackage{longtable}", body: "\\begin{longtable}{ll}a & b\\\\ c & d\\end{longtable}" },
  { name: "multirow", engines: PDF, preamble: "\\usepackage{multirow}", body: "\\begin{tabular}{|l|l|}\\hline\\multirow{2}{*}{M} & 1\\\\ & 2\\\\\\hline\\end{tabular}" },
  { name: "siunitx", engines: ALL, preamble: "\\usepackage{siunitx}", body: "\\qty{9.81}{\\metre\\per\\second\\squared} and \\num{12345.678}" },
  { name: "babel", engines: PDF, preamble: "\\usepackage[T1]{fontenc}\\usepackage[ngerman,english]{babel}", body: "\\foreignlanguage{ngerman}{Gr\\\"u\\ss e} \\selectlanguage{ngerman}\\today" },
  { name: "csquotes", engines: ALL, preamble: "\\usepackage{csquotes}", body: "\\enquote{quoted}" },
  { name: "fancyhdr", engines: ALL, preamble: "\\usepackage{fancyhdr}\\pagestyle{fancy}\\fancyhead[L]{Head}", body: "Body." },
  { name: "titlesec", engines: ALL, preamble: "\\usepackage{titlesec}\\titleformat{\\section}{\\Large\\bfseries}{\\thesection.}{1em}{}", body: "\\section{Title}" },
  { name: "enumitem", engines: ALL, preamble: "\\usepackage{enumitem}", body: "\\begin{enumerate}[label=(\\alph*)]\\item one\\item two\\end{enumerate}" },
  { name: "subcaption", engines: PDF, preamble: "\\usepackage{graphicx}\\usepackage{subcaption}", body: "\\begin{figure}\\begin{subfigure}{.4\\linewidth}\\includegraphics[width=\\linewidth]{example-image-a}\\caption{A}\\end{subfigure}\\caption{Both}\\end{figure}" },
  { name: "float", engines: PDF, preamble: "\\usepackage{float}", body: "\\begin{table}[H]\\centering x\\caption{T}\\end{table}" },
  { name: "listings", engines: ALL, preamble: "\\usepackage{listings}\\lstset{language=Python}", body: "\\begin{lstlisting}\ndef f(x):\n    return x\n\\end{lstlisting}" },
  { name: "etoolbox", engines: PDF, preamble: "\\usepackage{etoolbox}\\newtoggle{t}\\toggletrue{t}", body: "\\iftoggle{t}{yes}{no}" },
  { name: "microtype", engines: ["pdflatex", "lualatex"], preamble: "\\usepackage{microtype}", body: "Protrusion and expansion." },
  { name: "lmodern-T1", engines: PDF, preamble: "\\usepackage[T1]{fontenc}\\usepackage{lmodern}", body: "Stra\\ss e \\guillemotleft{}x\\guillemotright" },
  { name: "fontawesome", engines: ["pdflatex", "xelatex"], preamble: "\\usepackage{fontawesome}", body: "\\faGithub{} \\faEnvelope" },
  { name: "fontawesome5", engines: ALL, preamble: "\\usepackage{fontawesome5}", body: "\\faGithub{} \\faEnvelope" },
  { name: "algorithm2e", engines: PDF, preamble: "\\usepackage[ruled]{algorithm2e}", body: "\\begin{algorithm}\\KwIn{x}\\eIf{x}{a}{b}\\caption{Alg}\\end{algorithm}" },
  { name: "algpseudocode", engines: PDF, preamble: "\\usepackage{algorithm}\\usepackage{algpseudocode}", body: "\\begin{algorithmic}\\State $x \\gets 1$\\end{algorithmic}" },
  { name: "cleveref", engines: ALL, preamble: "\\usepackage{hyperref}\\usepackage{cleveref}", body: "\\section{A}\\label{a} See \\cref{a}." },
  { name: "todonotes", engines: PDF, preamble: "\\usepackage{todonotes}", body: "Text\\todo{fix this}" },
  { name: "tcolorbox", engines: ALL, preamble: "\\usepackage[most]{tcolorbox}", body: "\\begin{tcolorbox}[title=Box]inside\\end{tcolorbox}" },
  { name: "mhchem", engines: ALL, preamble: "\\usepackage[version=4]{mhchem}", body: "\\ce{2H2 + O2 -> 2H2O}" },
  { name: "chemfig", engines: PDF, preamble: "\\usepackage{chemfig}", body: "\\chemfig{H-C(-[2]H)(-[6]H)-H}" },
  { name: "physics", engines: PDF, preamble: "\\usepackage{physics}", body: "$\\dv{f}{x} = \\abs{x}$" },
  { name: "lipsum", engines: PDF, preamble: "\\usepackage{lipsum}", body: "\\lipsum[1-3]" },
  { name: "multicol", engines: PDF, preamble: "\\usepackage{multicol}", body: "\\begin{multicols}{2}left and right\\end{multicols}" },
  { name: "wrapfig", engines: PDF, preamble: "\\usepackage{wrapfig}\\usepackage{graphicx}", body: "\\begin{wrapfigure}{r}{3cm}\\includegraphics[width=3cm]{example-image}\\end{wrapfigure}Text around." },
  { name: "setspace", engines: PDF, preamble: "\\usepackage{setspace}\\onehalfspacing", body: "Spaced." },
  { name: "qrcode", engines: PDF, preamble: "\\usepackage{qrcode}", body: "\\qrcode{https://example.org}" },
  { name: "forest", engines: PDF, preamble: "\\usepackage{forest}", body: "\\begin{forest}[S[NP][VP]]\\end{forest}" },
  { name: "pdfpages", engines: PDF, preamble: "\\usepackage{pdfpages}", body: "Before.\\includepdf[pages=1]{example-image-a4.pdf}" },
  { name: "natbib", engines: PDF, preamble: "\\usepackage[numbers]{natbib}", body: "No citations here." },
  { name: "newtx", engines: PDF, preamble: "\\usepackage{newtxtext,newtxmath}", body: "Times-like $x^2$." },
  { name: "libertinus", engines: ALL, preamble: "\\usepackage{libertinus}", body: "Libertinus text." },
  { name: "fontspec", engines: UNICODE, preamble: "\\usepackage{fontspec}\\setmainfont{Libertinus Serif}", body: "Unicode: Ærøskøbing, ½." },
  { name: "unicode-math", engines: UNICODE, preamble: "\\usepackage{unicode-math}\\setmathfont{Latin Modern Math}", body: "$∀x ∈ ℝ: x² ≥ 0$" },
  { name: "polyglossia", engines: UNICODE, preamble: "\\usepackage{polyglossia}\\setdefaultlanguage{french}", body: "Bonjour « monde »." },
  { name: "xeCJK", engines: ["xelatex"], preamble: "\\usepackage{xeCJK}\\setCJKmainfont{Noto Serif CJK SC}", body: "中文文本。" },
  { name: "beamer", engines: ALL, source: "\\documentclass{beamer}\\usetheme{Madrid}\\title{T}\\begin{document}\\begin{frame}{Frame}MARK\\end{frame}\\end{document}", body: "" },
  { name: "memoir", engines: PDF, cls: "memoir", body: "\\chapter{C} In memoir." },
  { name: "scrartcl", engines: PDF, cls: "scrartcl", body: "\\section{K} KOMA." },
  { name: "IEEEtran", engines: PDF, cls: "IEEEtran", body: "\\section{Intro} IEEE." },
  { name: "acmart", engines: PDF, source: "\\documentclass[sigconf,nonacm]{acmart}\\title{T}\\author{A}\\begin{document}\\maketitle MARK\\end{document}", body: "" },
  { name: "moderncv", engines: PDF, source: "\\documentclass{moderncv}\\moderncvstyle{classic}\\name{Ada}{Lovelace}\\begin{document}\\makecvtitle\\section{Work}\\cventry{1843}{Notes}{}{}{}{MARK}\\end{document}", body: "" },
  { name: "exam", engines: PDF, cls: "exam", body: "\\begin{questions}\\question[2] Why?\\end{questions}" },
  { name: "tufte-handout", engines: PDF, cls: "tufte-handout", body: "Text\\sidenote{side}." },
  { name: "standalone", engines: PDF, source: "\\documentclass[tikz]{standalone}\\begin{document}\\begin{tikzpicture}\\node{MARK};\\end{tikzpicture}\\end{document}", body: "" },
];

/**
 * Rows compiled together, in this order (hyperref and cleveref last; xcolor's options before the
 * packages that load it; babel's shorthands after the others' bodies). Packages that clash are
 * kept apart: mathtools' and physics' \abs, siunitx's and physics' \qty, fontawesome and
 * fontawesome5, amssymb and newtxmath, algorithm2e and algorithm. Rows with their own class or
 * source are compiled alone.
 */
const BATCHES: string[][] = [
  ["amsmath", "amssymb", "amsthm", "mathtools", "siunitx", "mhchem", "csquotes", "enumitem", "hyperref", "cleveref"],
  ["graphicx", "xcolor", "tikz", "pgfplots", "tikz-cd", "circuitikz", "chemfig", "forest", "qrcode", "todonotes", "tcolorbox", "algpseudocode"],
  ["booktabs", "tabularx", "longtable", "multirow", "geometry", "fancyhdr", "titlesec", "float", "subcaption", "setspace", "multicol", "lipsum", "listings", "etoolbox", "pdfpages", "microtype", "natbib", "newtx", "algorithm2e", "wrapfig"],
  ["fontawesome", "physics", "lmodern-T1", "babel"],
  ["fontawesome5", "libertinus"],
  ["fontspec", "unicode-math", "polyglossia", "xeCJK"],
];

const marker = (r: Row) => `Marker${r.name.replace(/[^A-Za-z0-9]/g, "")}`;

function source(r: Row): string {
  if (r.source) return r.source.replace("MARK", marker(r));
  return `\\documentclass{${r.cls ?? "article"}}\n${r.preamble ?? ""}\n\\begin{document}\n${r.body}\n\n${marker(r)}\n\\end{document}\n`;
}

function batchSource(rows: Row[]): string {
  const preambles = rows.map((r) => r.preamble ?? "").join("\n");
  return `\\documentclass{article}\n${preambles}\n\\begin{document}\n${rows.map((r) => `${r.body}\n\n${marker(r)}\n\n`).join("")}\\end{document}\n`;
}

interface Outcome {
  status: number;
  error: string;
  /** the PDF's text without white space */
  text: string;
}

/** Each compile once, whichever test asks first (a row's test and its batch's test share them). */
const compiles = new Map<string, Promise<Outcome>>();
function compileOnce(key: string, engine: Engine, src: string): Promise<Outcome> {
  let p = compiles.get(key);
  if (!p) {
    p = compile(s.url, { engine, source: src }).then((r) => ({
      status: r.status,
      error: r.json?.error?.message ?? "",
      text: r.status === 200 ? pdfText(r.body).replace(/\s+/g, "") : "",
    }));
    compiles.set(key, p);
  }
  return p;
}
const alone = (r: Row, engine: Engine) => compileOnce(`row ${r.name} ${engine}`, engine, source(r));
const batchRows = (b: string[], engine: Engine) => b.map((n) => ROWS.find((r) => r.name === n)!).filter((r) => r.engines.includes(engine));
const batched = (b: string[], engine: Engine) => compileOnce(`batch ${b[0]} ${engine}`, engine, batchSource(batchRows(b, engine)));
const batchOf = (r: Row) => BATCHES.find((b) => b.includes(r.name));

const s = sharedServer();

it(`at least 40 packages and classes (${ROWS.length}, ${ROWS.reduce((a, r) => a + r.engines.length, 0)} row compiles)`, () => {
  expect(ROWS.length).toBeGreaterThanOrEqual(40);
});

it("every batched row exists, is in one batch only, and is a plain preamble and body", () => {
  const names = BATCHES.flat();
  expect(new Set(names).size).toBe(names.length);
  for (const n of names) {
    const r = ROWS.find((x) => x.name === n);
    expect(r, n).toBeDefined();
    expect(r!.cls ?? r!.source, n).toBeUndefined();
  }
});

// a few rows at a time (vitest's maxConcurrency); a row's engines one after the other
describe.concurrent("popular packages and classes", () => {
  for (const r of ROWS) {
    it(`${r.name} (${r.engines.join(", ")})`, async () => {
      const b = batchOf(r);
      for (const engine of r.engines) {
        if (b) {
          const together = await batched(b, engine);
          if (together.status === 200 && together.text.includes(marker(r))) continue;
        }
        const res = await alone(r, engine);
        expect(res.status, `${engine}: ${res.error}`).toBe(200);
        expect(res.text).toContain(marker(r));
      }
    }, 200_000);
  }
});

describe.concurrent("batches: the rows compile together", () => {
  for (const b of BATCHES) {
    for (const engine of ALL) {
      if (batchRows(b, engine).length === 0) continue;
      it(`${b.join(", ")} on ${engine}`, async () => {
        const together = await batched(b, engine);
        const missing = batchRows(b, engine).filter((r) => !together.text.includes(marker(r)));
        if (together.status === 200 && missing.length === 0) return;
        // name the culprit: the rows that fail alone too
        const culprits: string[] = [];
        for (const r of together.status === 200 ? missing : batchRows(b, engine)) {
          const res = await alone(r, engine);
          if (res.status !== 200 || !res.text.includes(marker(r))) culprits.push(`${r.name}: ${res.status} ${res.error}`);
        }
        const why = culprits.length ? `failing alone too: ${culprits.join("; ")}` : "every row compiles alone: their combination fails (split the batch)";
        expect.fail(`${engine} batch: ${together.status} ${together.error}; missing markers: ${missing.map((r) => r.name).join(", ") || "none"}; ${why}`);
      }, 200_000);
    }
  }
});

describe("T1 fonts are vector fonts", () => {
  it("pdflatex with \\usepackage[T1]{fontenc}: Type 1 EC fonts (cm-super), no bitmap fonts", async () => {
    const src = "\\documentclass{article}\n\\usepackage[T1]{fontenc}\n\\begin{document}\n\\section{Überschrift}\nStraße, «guillemets», \\textbf{bold}, \\textit{italic}, \\textsc{Small Caps}, \\texttt{mono}.\n\\end{document}\n";
    const r = await compile(s.url, { engine: "pdflatex", source: src });
    expectPdf(r);
    const fonts = pdfFonts(r.body);
    expect(fonts.length).toBeGreaterThanOrEqual(5);
    for (const f of fonts) expect(f.type).toBe("Type 1");
    expect(fonts.map((f) => f.name).join(" ")).toMatch(/SFRM1000/);
    expect(pdfText(r.body)).toContain("Straße");
  });
});

/** pdffonts' table: name and type (its columns are fixed-width). */
function pdfFonts(pdf: Buffer): { name: string; type: string }[] {
  const r = spawnSync("pdffonts", ["-"], { input: pdf, encoding: "utf8" });
  if (r.status !== 0) throw new Error(`pdffonts failed: ${r.stderr}`);
  return r.stdout
    .split("\n")
    .slice(2)
    .filter((l) => l.trim())
    .map((l) => ({ name: l.split(/\s+/)[0] ?? "", type: l.slice(37, 55).trim() }));
}
