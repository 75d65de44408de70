// The error a 422 reports, from real logs: each fixture under fixtures/errors/ is a
// small broken document (NAME.ENGINE.tex) and the log the real engine wrote for it
// with the server's options (NAME.ENGINE.log; regenerate with make-logs.sh); expected.tsv
// says what each must give.
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { firstCause, parseLog } from "../src/log-parser.ts";
import { FIXTURES } from "./helpers.ts";

const DIR = path.join(FIXTURES, "errors");

/** expected.tsv: fixture, where the cause is (file:line, or -), text its message must contain */
const TABLE = readFileSync(path.join(DIR, "expected.tsv"), "utf8")
  .split("\n")
  .filter((row) => row && !row.startsWith("#"))
  .map((row) => {
    const [name = "", at = "", message = ""] = row.split("\t");
    const colon = at.lastIndexOf(":");
    return colon < 0 ? { name, message } : { name, message, file: at.slice(0, colon), line: Number(at.slice(colon + 1)) };
  });

describe("the first real cause of a failed run (real logs)", () => {
  it("every fixture has its expected cause", () => {
    const fixtures = readdirSync(DIR).filter((f) => f.endsWith(".tex")).map((f) => f.slice(0, -".tex".length));
    expect(TABLE.map((t) => t.name).sort()).toEqual(fixtures.sort());
    expect(TABLE.filter((t) => !t.message)).toEqual([]);
  });

  for (const { name, message, file, line } of TABLE) {
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
