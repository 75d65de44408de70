// xelatex's PDF driver (src/driver.ts): the TFM fonts read from a real .xdv, the job's lean
// font map, and through the server the same PDF fonts and text as the bare engine, including
// documents that must fall back to the installation's maps (a virtual font, a bitmap font).
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DRIVER_DIR, DRIVER_MAP, driverArgs, fontMaps, FontMaps, postambleFonts, writeLeanDriver, xdvTfmNames } from "../src/driver.ts";
import { engineEnv } from "../src/engine.ts";
import { resolveTexRoot, useTexRoot } from "../src/texroot.ts";
import type { RunningServer } from "../src/server.ts";
import { compile, doc, expectPdf, pdfText, testServer } from "./helpers.ts";

const MATH = doc("Hello $\\alpha+\\sum_{i=1}^n x_i^2 \\le \\int f$ world.");
/** fontspec's options that add fields to XeTeX's native font definitions, then TFM fonts (math). */
const FEATURES = doc(
  "{\\fontspec[Color=FF0000,FakeSlant=0.2,FakeStretch=1.2,FakeBold=1.5]{DejaVu Serif}Styled} and $x^2+\\gamma$.",
  "\\usepackage{fontspec}\n",
);
/** T1 Times: ptmr8t is a virtual font with no map entry of its own. */
const VIRTUAL = doc("Virtual fonts: caf\\'e.", "\\usepackage[T1]{fontenc}\n\\usepackage{times}\n");
/** bbm exists only as METAFONT source: the driver fails either way. */
const BITMAP = doc("$\\mathbbm{R}$", "\\usepackage{bbm}\n");

let work: string;
beforeAll(() => {
  // the installation's maps are read in this process: from the TeX the servers run (a machine may have no other)
  useTexRoot(resolveTexRoot(process.env));
  work = mkdtempSync(path.join(tmpdir(), "driver-test-"));
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** The bare engine's output in a fresh directory: main.xdv with -no-pdf, else main.pdf. */
function bare(name: string, source: string, noPdf: boolean): string {
  const dir = path.join(work, name);
  execFileSync("mkdir", ["-p", dir]);
  writeFileSync(path.join(dir, "main.tex"), source);
  spawnSync("xelatex", [...(noPdf ? ["-no-pdf"] : []), "-interaction=batchmode", "main.tex"], { cwd: dir, stdio: "ignore" });
  return dir;
}

function fontsOf(pdf: string | Buffer): string[] {
  const out = spawnSync("pdffonts", ["-"], { input: typeof pdf === "string" ? readFileSync(pdf) : pdf, encoding: "utf8" }).stdout;
  // the subset tag (ABCDEF+) is random per run; the name, type and embedding are not
  return out.split("\n").slice(2).filter(Boolean).map((l) => l.replace(/^[A-Z]{6}\+/, "").split(/\s+/).slice(0, 3).join(" ")).sort();
}

describe("the fonts of an .xdv", () => {
  it("lists the TFM fonts of the postamble and skips native font definitions with every optional field", async () => {
    const dir = bare("features", FEATURES, true);
    const names = await xdvTfmNames(path.join(dir, "main.xdv"));
    expect(names?.sort()).toEqual(["cmmi10", "cmr10", "cmr7"]);
  });

  it("gives up on anything but a well-formed postamble", async () => {
    const good = readFileSync(path.join(bare("math", MATH, true), "main.xdv"));
    const bad = path.join(work, "bad.xdv");
    writeFileSync(bad, good.subarray(0, good.length - 20)); // truncated
    expect(await xdvTfmNames(bad)).toBeUndefined();
    writeFileSync(bad, Buffer.concat([good.subarray(0, 100), Buffer.alloc(200, 223)]));
    expect(await xdvTfmNames(bad)).toBeUndefined();
    expect(postambleFonts(Buffer.from([248, ...new Array(28).fill(0), 200]))).toBeUndefined(); // an unknown opcode
    expect(await xdvTfmNames(path.join(work, "nosuch.xdv"))).toBeUndefined();
  });
});

describe("the lean font map", () => {
  it("keeps only the named fonts' entries, all of them, in order; none when one is missing", () => {
    const maps = new FontMaps("%c\nf  a.map\np a4\nf b.map\n", ["% comment\ncmr10 CMR10 <cmr10.pfb\ncmr7 CMR7 <cmr7.pfb\n", "cmr10 Other <other.pfb\nx@sfd@ X <x.ttf\n"]);
    expect(maps.leanCfg).toBe("%c\np a4\n");
    expect(maps.subset(["cmr10"])).toBe("x@sfd@ X <x.ttf\ncmr10 CMR10 <cmr10.pfb\ncmr10 Other <other.pfb\n");
    expect(maps.subset(["cmr10", "ptmr8t"])).toBeUndefined();
  });

  it("gives the same PDF fonts as the installation's maps, for a fraction of the entries", async () => {
    const dir = bare("lean", MATH, true);
    const maps = await fontMaps(engineEnv(work));
    expect(maps?.size).toBeGreaterThan(100);
    expect(await writeLeanDriver(dir, path.join(dir, "main.xdv"), maps, async () => {})).toBe(true);
    const map = readFileSync(path.join(dir, DRIVER_DIR, DRIVER_MAP), "utf8");
    expect(map.split("\n").filter(Boolean).map((l) => l.split(" ")[0]).sort()).toEqual(["cmex10", "cmmi10", "cmmi7", "cmr10", "cmr7", "cmsy10"]);
    const driver = (pdf: string, env: Record<string, string>, map?: string) =>
      spawnSync("xdvipdfmx", driverArgs("main.xdv", pdf, map), { cwd: dir, env: { ...process.env, ...env }, encoding: "utf8" });
    expect(driver("lean.pdf", { DVIPDFMXINPUTS: `${path.join(dir, DRIVER_DIR)}:` }, path.join(dir, DRIVER_DIR, DRIVER_MAP)).status).toBe(0);
    expect(driver("full.pdf", {}).status).toBe(0);
    expect(fontsOf(path.join(dir, "lean.pdf"))).toEqual(fontsOf(path.join(dir, "full.pdf")));
    expect(fontsOf(path.join(dir, "lean.pdf"))).toHaveLength(7);
  });

  it("is not written for a virtual font or a bitmap font", async () => {
    const maps = await fontMaps(engineEnv(work));
    for (const [name, src] of [["vf", VIRTUAL], ["bitmap", BITMAP]] as const) {
      const dir = bare(name, src, true);
      expect(await writeLeanDriver(dir, path.join(dir, "main.xdv"), maps, async () => {}), name).toBe(false);
    }
  });
});

describe("through the server: the bare engine's PDF", () => {
  const SAME = [["math (lean map)", MATH], ["fontspec features", FEATURES], ["virtual font (installation's maps)", VIRTUAL]] as const;
  const cli = new Map<string, string>();
  let s: RunningServer;
  beforeAll(async () => {
    // the bare engine first: a pause between requests longer than the server's keep-alive races its socket close
    for (const [name, src] of SAME) cli.set(name, path.join(bare(`cli-${name.split(" ")[0]}`, src, false), "main.pdf"));
    s = await testServer({ engines: ["xelatex"], poolSize: { pdflatex: 0, xelatex: 2, lualatex: 0 } });
  });
  afterAll(() => s?.close());

  for (const [name, src] of SAME) {
    it(name, async () => {
      const r = await compile(s.url, { engine: "xelatex", source: src });
      expectPdf(r);
      expect(fontsOf(r.body)).toEqual(fontsOf(cli.get(name)!));
      expect(pdfText(r.body)).toBe(pdfText(readFileSync(cli.get(name)!)));
    });
  }

  it("a bitmap font: the driver's failure is a 422 naming it", async () => {
    const r = await compile(s.url, { engine: "xelatex", source: BITMAP });
    expect(r.status).toBe(422);
    expect(r.json.error.code).toBe("compile_error");
    expect(r.json.error.message).toContain("The PDF driver (xdvipdfmx) failed");
    expect(r.json.error.log).toContain("xdvipdfmx:fatal");
  });

  it("a two-pass document gets its PDF from the last pass only", async () => {
    const r = await compile(s.url, { engine: "xelatex", source: doc("\\tableofcontents\\section{One}See page~\\pageref{x}.\\label{x}") });
    expectPdf(r);
    expect(Number(r.headers.get("x-compile-passes"))).toBeGreaterThanOrEqual(2);
    expect(pdfText(r.body)).toMatch(/1\s+One\s+1/);
  });
});
