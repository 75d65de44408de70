// Every scan of user-controlled text (logs, .bcf files, sources) is linear: adversarial
// inputs of several MiB are handled in a small fraction of a second. The bounds are
// generous ("does not hang"); the quadratic scans these replace took minutes.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { locateMissingFile, logAsksRerun, logTail, parseLog, type LogError } from "../src/log-parser.ts";
import { bcfDatasources, biberSources } from "../src/passes.ts";

const MiB = 1024 * 1024;
const BOUND_MS = 1000;

function timed<T>(f: () => T): { value: T; ms: number } {
  const t = performance.now();
  const value = f();
  return { value, ms: performance.now() - t };
}

function repeat(unit: string, bytes: number): string {
  return unit.repeat(Math.ceil(bytes / unit.length));
}

describe("linear scans over hostile text", () => {
  it("biber data sources: 7 MiB of unterminated <bcf:datasource", async () => {
    const bcf = repeat("<bcf:datasource ", 7 * MiB);
    const r = timed(() => bcfDatasources(bcf));
    expect(r.value).toEqual([]);
    expect(r.ms).toBeLessThan(BOUND_MS);
    // and with a '>' at the very end (every start shares it)
    const r2 = timed(() => bcfDatasources(bcf + ">x<y"));
    expect(r2.value).toEqual([]);
    expect(r2.ms).toBeLessThan(BOUND_MS);
    const dir = mkdtempSync(path.join(tmpdir(), "bcf-"));
    try {
      writeFileSync(path.join(dir, "main.bcf"), bcf);
      const t = performance.now();
      expect(await biberSources(dir)).toEqual({ ok: true });
      expect(performance.now() - t).toBeLessThan(BOUND_MS);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("biber data sources: still found, and checked, in a real-looking .bcf", async () => {
    const bcf = `<bcf:bibdata section="0">\n  <bcf:datasource type="file" datatype="bibtex" glob="false">refs.bib</bcf:datasource>\n  <bcf:datasource type="file" datatype="bibtex">../secret.bib</bcf:datasource>\n</bcf:bibdata>`;
    expect(bcfDatasources(bcf)).toEqual([
      { attrs: ' type="file" datatype="bibtex" glob="false"', src: "refs.bib" },
      { attrs: ' type="file" datatype="bibtex"', src: "../secret.bib" },
    ]);
    const many = Array.from({ length: 300 }, (_, i) => `<bcf:datasource type="file">f${i}.bib</bcf:datasource>`).join("\n");
    expect(bcfDatasources(many)).toBeUndefined();
    const dir = mkdtempSync(path.join(tmpdir(), "bcf-"));
    try {
      writeFileSync(path.join(dir, "refs.bib"), "");
      writeFileSync(path.join(dir, "main.bcf"), bcf);
      expect(await biberSources(dir)).toEqual({ ok: false, bad: "../secret.bib" });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  const hostileLogs: [string, string][] = [
    ["dotted line without a colon", repeat("a.", 8 * MiB)],
    ["dotted lines", repeat(`${"x.y".repeat(3000)}\n`, 8 * MiB)],
    ["file:line prefixes without a message", repeat(`${"a.tex:1".repeat(1000)}\n`, 8 * MiB)],
    ["error lines", repeat("! Undefined control sequence.\n", 8 * MiB)],
    ["package warnings", repeat("Package a Warning: Reference `x' on page 1 undefined on input line 1\n(a) more\n", 8 * MiB)],
    ["runaways", repeat("Runaway argument?\n", 8 * MiB)],
    ["output lines", repeat(`Output written on ${" (1".repeat(3000)}\n`, 8 * MiB)],
    ["box warnings", repeat(`Overfull \\hbox ${"at line".repeat(1000)}\n`, 8 * MiB)],
    ["one long line", "x".repeat(8 * MiB)],
  ];
  for (const [name, log] of hostileLogs) {
    it(`log parser: 8 MiB of ${name}`, () => {
      const r = timed(() => parseLog(log));
      expect(r.ms).toBeLessThan(BOUND_MS);
      expect(r.value.errors.length).toBeLessThanOrEqual(20);
      expect(r.value.warnings.length).toBeLessThanOrEqual(200);
      const t = timed(() => logTail(log, 64 * 1024));
      expect(Buffer.byteLength(t.value)).toBeLessThanOrEqual(64 * 1024);
      expect(t.ms).toBeLessThan(BOUND_MS);
      const a = timed(() => logAsksRerun(log));
      expect(a.ms).toBeLessThan(BOUND_MS);
    });
  }

  it("log tail: bootstrap starts without an end, on one 8 MiB line", () => {
    const log = repeat("\\message{TEXPOOL-READY}", 8 * MiB);
    const t = timed(() => logTail(log, 64 * 1024));
    expect(t.ms).toBeLessThan(BOUND_MS);
    const hidden = logTail("x\n\\message{TEXPOOL-READY}\\read /srv/secret \\batchmode\\texpoolgo\ny", 1000);
    expect(hidden).toBe("x\nmain.tex\ny");
  });

  it("rerun check: 8 MiB of (rerunfilecheck) and blanks", () => {
    const log = repeat(`(rerunfilecheck)${" ".repeat(100)}`, 8 * MiB);
    const r = timed(() => logAsksRerun(log));
    expect(r.value).toBe(false);
    expect(r.ms).toBeLessThan(BOUND_MS);
    expect(logAsksRerun("(rerunfilecheck)    \n   Rerun to get bookmarks right")).toBe(true);
  });

  it("missing-file line finder: a long source line of \\usepackage{", () => {
    // within the first 256 KiB (where preambles are) the line is found past the long one
    const src = `\\documentclass{article}\n${repeat("\\usepackage{ foo ", 200 * 1024)}\n\\usepackage{amsmath, foo }\n`;
    const e: LogError = { message: "LaTeX Error: File `foo.sty' not found.", file: "main.tex", line: 9 };
    const r = timed(() => locateMissingFile(e, src, "main.tex"));
    expect(r.ms).toBeLessThan(BOUND_MS);
    expect(e.line).toBe(3);
    // past them it is not looked for: the log's line stays
    const far: LogError = { ...e, line: 9 };
    const r2 = timed(() => locateMissingFile(far, `\\documentclass{article}\n${repeat("\\usepackage{ foo ", 4 * MiB)}\n\\usepackage{amsmath, foo }\n`, "main.tex"));
    expect(r2.ms).toBeLessThan(BOUND_MS);
    expect(far.line).toBe(9);
  });
});
