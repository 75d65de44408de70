// Fonts that exist only as METAFONT sources in TeX Live (bbm, blackboard bold): made on demand
// into a cache every job reads, from TeX Live's own sources only, never from a project's `.mf`.
import { existsSync, readdirSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { missingFont } from "../src/mf.ts";
import type { RunningServer } from "../src/server.ts";
import { compile, expectPdf, pdfText, testServer } from "./helpers.ts";

let s: RunningServer;
beforeAll(async () => {
  s = await testServer();
});
afterAll(async () => {
  await s?.close();
});

const cached = () => {
  const dir = s.config.mfCacheDir!;
  const list = (d: string): string[] => (existsSync(d) ? readdirSync(d, { recursive: true, encoding: "utf8" }) : []);
  return [...list(path.join(dir, "pk")), ...list(path.join(dir, "tfm"))].map((f) => path.basename(f));
};

const bbm = (font: string) => `\\documentclass{article}\n\\usepackage{bbm}\n\\begin{document}\nReals: $${font}{R}$.\n\\end{document}\n`;

describe("METAFONT fonts", () => {
  it("pdflatex: bbm is made once, then every job reads it from the cache", async () => {
    const first = await compile(s.url, { engine: "pdflatex", source: bbm("\\mathbbm") });
    expectPdf(first);
    expect(pdfText(first.body)).toContain("Reals:");
    expect(cached()).toContain("bbm10.600pk");
    const again = await compile(s.url, { engine: "pdflatex", source: bbm("\\mathbbm") });
    expectPdf(again);
    expect(Number(again.headers.get("x-compile-passes"))).toBe(1); // no failed first round this time
  });

  it("lualatex: the same cache", async () => {
    const r = await compile(s.url, { engine: "lualatex", source: bbm("\\mathbbmss") });
    expectPdf(r);
    expect(cached()).toContain("bbmss10.600pk");
  });

  it("a project's own .mf is never run, neither for a font of its own nor in place of TeX Live's", async () => {
    // METAFONT that would write a file if run (and fails): the font it defines does not exist in TeX Live
    const evil = "message \"ran\"; errmessage \"project mf ran\"; end\n";
    const own = await compile(s.url, {
      engine: "pdflatex",
      source: "\\documentclass{article}\n\\font\\x=texpoolprojectfont\n\\begin{document}\\x A\\end{document}\n",
      files: [{ path: "texpoolprojectfont.mf", content: evil }],
    });
    expect(own.status).toBe(422);
    expect(own.json.error.message).toContain("texpoolprojectfont");
    expect(cached().some((f) => f.startsWith("texpoolprojectfont"))).toBe(false);
    // bbm at 12 pt: made from TeX Live's bbm12.mf, not from the project's broken one beside the document
    expect(cached()).not.toContain("bbm12.600pk");
    const shadow = await compile(s.url, {
      engine: "pdflatex",
      source: "\\documentclass[12pt]{article}\n\\usepackage{bbm}\n\\begin{document}\nReals: $\\mathbbm{R}$.\n\\end{document}\n",
      files: [{ path: "bbm12.mf", content: evil }],
    });
    expectPdf(shadow);
    expect(cached()).toContain("bbm12.600pk");
  });
});

describe("missingFont (reads compile errors)", () => {
  it.each([
    ["!pdfTeX error: pdflatex (file bbm10): Font bbm10 at 600 not found", { font: "bbm10", dpi: 600 }],
    ["error:  (file bbm10) (type 3): font bbm10 at 657 not found", { font: "bbm10", dpi: 657 }],
    ["Font U/bbm/m/n/10=bbmx10 at 10.0pt not loadable: Metric (TFM) file not found.", { font: "bbmx10" }],
    ["(file ../../etc/x): Font ../../etc/x at 600 not found", undefined],
    ["(file bbm10): Font other at 600 not found", undefined],
    ["Undefined control sequence.", undefined],
  ])("%s", (message, want) => {
    expect(missingFont(message)).toEqual(want);
  });
});
