// The error a 422 reports, from real logs: each fixture under fixtures/errors/ is a
// small broken document (NAME.ENGINE.tex) and the log the real engine wrote for it
// with the server's options (NAME.ENGINE.log; regenerate with make-logs.sh).
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { firstCause, parseLog } from "../src/log-parser.ts";
import { FIXTURES } from "./helpers.ts";

const DIR = path.join(FIXTURES, "errors");

/** [fixture, text the message must contain, file, line] */
const TABLE: [string, string, string | undefined, number | undefined][] = [
  ["latex-error.pdflatex", "LaTeX Error: \\begin{itemize} on input line 3 ended by \\end{enumerate}.", "main.tex", 5],
  ["undefined-cs.pdflatex", "Undefined control sequence.", "main.tex", 5],
  ["undefined-cs-included.pdflatex", "Undefined control sequence.", "chapters/one.tex", 3],
  ["missing-sty.pdflatex", "LaTeX Error: File `nosuchpackage.sty' not found.", "main.tex", 3],
  ["missing-class.pdflatex", "LaTeX Error: File `nosuchclass.cls' not found.", "main.tex", 1],
  ["missing-input.pdflatex", "LaTeX Error: File `chapters/nosuch.tex' not found.", "main.tex", 4],
  ["missing-graphic.pdflatex", "File `figures/nosuch.png' not found", "main.tex", 4],
  ["runaway.pdflatex", "Runaway argument ({bold text that never ends…): Paragraph ended before", "main.tex", 5],
  ["file-ended.pdflatex", "File ended while scanning use of \\emph", undefined, undefined],
  ["package-error.pdflatex", "Package xcolor Error: Undefined color `nosuchcolor'.", "main.tex", 4],
  ["font-not-loadable.pdflatex", "Font \\x=nosuchfont10 not loadable: Metric (TFM) file not found.", "main.tex", 3],
  ["hebrew-babel.pdflatex", "Font jerus10 is not available to the TeX engine here", "main.tex", 5],
  ["bitmap-font.pdflatex", "Font bbm10 has no Type 1 or OpenType version", undefined, undefined],
  ["bitmap-font.lualatex", "Font bbm10 has no Type 1 or OpenType version", undefined, undefined],
  ["bitmap-font.xelatex", "The PDF driver (xdvipdfmx) failed", undefined, undefined],
  ["missing-end.pdflatex", "Missing \\end{document}", "main.tex", 3],
  ["lua-error.lualatex", "Lua error: [\\directlua]:1: boom from lua", "main.tex", 3],
  ["lua-syntax.lualatex", "Lua error: [\\directlua]:1: unexpected symbol near '='.", "main.tex", 4],
  ["fontspec.xelatex", 'Package fontspec Error: The font "No Such Font Family" cannot be found.', "main.tex", 4],
  ["fontspec.lualatex", 'Package fontspec Error: The font "NoSuchFontFamily" cannot be found.', "main.tex", 4],
  ["missing-dollar.pdflatex", "Missing $ inserted.", "main.tex", 3],
  ["undefined-env.pdflatex", "LaTeX Error: Environment theorem undefined.", "main.tex", 3],
  ["extra-brace.pdflatex", "Too many }'s.", "main.tex", 3],
  ["fancyvrb-extraneous.pdflatex", "FancyVerb Error: Extraneous input ` trailing\\end{}' between \\end{Verbatim} and line end", "main.tex", 6],
];

describe("the first real cause of a failed run (real logs)", () => {
  for (const [name, message, file, line] of TABLE) {
    it(name, () => {
      const log = readFileSync(path.join(DIR, `${name}.log`), "utf8");
      const source = readFileSync(path.join(DIR, `${name}.tex`), "utf8");
      const { first, errors } = firstCause(parseLog(log), source, "main.tex", "stopped");
      expect(first.message).toContain(message);
      expect(first.file).toBe(file);
      expect(first.line).toBe(line);
      // never only the consequence
      expect(errors.some((e) => /Emergency stop|==> Fatal error/.test(e.message))).toBe(false);
    });
  }
});

it("a font without metrics (Hebrew with pdflatex) is named, with the engines that can set it", () => {
  const log = readFileSync(path.join(DIR, "hebrew-babel.pdflatex.log"), "utf8");
  const { first } = firstCause(parseLog(log), "", "main.tex", "stopped");
  expect(first.message).toContain("compile with xelatex or lualatex");
  expect(first.message).toContain("(Font LHE/cmr/m/n/10=jerus10 at 10.0pt not loadable: Metric (TFM) file not found.)");
});
