// Fonts a project brings: fontspec finds them by file name and by family name, with xelatex and
// lualatex. The fixture fonts (fixtures/fonts, made by rename-font.ts) have a family no system
// has, so finding them by that name proves the project's file was used.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { fontNames, projectFonts } from "../src/fonts.ts";
import { compile, expectPdf, FIXTURES } from "./helpers.ts";
import { sharedServer } from "./shared-server.ts";

const font = (name: string) => readFileSync(path.join(FIXTURES, "fonts", name)).toString("base64");
const REGULAR = font("ProjectSans-Regular.otf");
const BOLD = font("ProjectSans-Bold.otf");

/** The names of the fonts a PDF embeds (pdffonts). */
function embedded(pdf: Buffer): string {
  const dir = mkdtempSync(path.join(tmpdir(), "fonts-test-"));
  try {
    writeFileSync(path.join(dir, "x.pdf"), pdf);
    return spawnSync("pdffonts", [path.join(dir, "x.pdf")], { encoding: "utf8" }).stdout;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The fixture fonts' PostScript names, in the CFF table (xdvipdfmx) or the name table (LuaTeX). */
const usesProjectFont = (fonts: string, weight: "Regular" | "Bold") => fonts.includes(`ComicNeueAngular-${weight}`) || fonts.includes(`TexpoolProjectSans-${weight}`);

// the compile server every job-only test file shares (vitest.config.ts)
const s = sharedServer();

const doc = (setup: string) => `\\documentclass{article}\n\\usepackage{fontspec}\n${setup}\n\\begin{document}\nProject font \\textbf{bold}.\n\\end{document}\n`;

describe.each(["xelatex", "lualatex"] as const)("%s", (engine) => {
  it("finds a project font by its family name, with its bold face", async () => {
    const r = await compile(s.url, {
      engine,
      mainPath: "cv/cv.tex",
      source: doc("\\setmainfont{Texpool Project Sans}"),
      files: [
        { path: "fonts/ProjectSans-Regular.otf", content: REGULAR, encoding: "base64" },
        { path: "fonts/ProjectSans-Bold.otf", content: BOLD, encoding: "base64" },
      ],
    });
    expectPdf(r);
    const f = embedded(r.body);
    expect(usesProjectFont(f, "Regular"), f).toBe(true);
    expect(usesProjectFont(f, "Bold"), f).toBe(true);
  });

  it("finds project fonts by file name (beside the main file, and with Path=)", async () => {
    const here = await compile(s.url, {
      engine,
      source: doc("\\setmainfont{ProjectSans-Regular.otf}[BoldFont=ProjectSans-Bold.otf]"),
      files: [
        { path: "ProjectSans-Regular.otf", content: REGULAR, encoding: "base64" },
        { path: "ProjectSans-Bold.otf", content: BOLD, encoding: "base64" },
      ],
    });
    expectPdf(here);
    expect(usesProjectFont(embedded(here.body), "Bold")).toBe(true);
    const inPath = await compile(s.url, {
      engine,
      source: doc("\\setmainfont{ProjectSans}[Path=fonts/, Extension=.otf, UprightFont=*-Regular, BoldFont=*-Bold]"),
      files: [
        { path: "fonts/ProjectSans-Regular.otf", content: REGULAR, encoding: "base64" },
        { path: "fonts/ProjectSans-Bold.otf", content: BOLD, encoding: "base64" },
      ],
    });
    expectPdf(inPath);
    expect(usesProjectFont(embedded(inPath.body), "Regular")).toBe(true);
  });

  it("a family no file of the project has is still the usual error", async () => {
    const r = await compile(s.url, { engine, source: doc("\\setmainfont{Texpool Missing Family}"), files: [{ path: "fonts/x.otf", content: "not a font" }] });
    expect(r.status).toBe(422);
    expect(r.json.error.message).toMatch(/The font "Texpool ?Missing ?Family" cannot be found/);
  });
});

describe("font names (the server reads them from untrusted files)", () => {
  const regular = readFileSync(path.join(FIXTURES, "fonts", "ProjectSans-Regular.otf"));

  it("reads the family and style of the fixture", () => {
    expect(fontNames(regular)).toEqual({ family: "Texpool Project Sans", style: "Regular" });
  });

  it("gives up on truncated, garbage and lying data without reading out of bounds", () => {
    for (let n = 0; n < regular.length; n += 97) expect(() => fontNames(regular.subarray(0, n))).not.toThrow();
    expect(fontNames(Buffer.from("not a font at all"))).toBeUndefined();
    const lying = Buffer.from(regular);
    // every table length and offset set to the maximum
    for (let i = 0; i < lying.readUInt16BE(4); i++) lying.writeUInt32BE(0xffffffff, 12 + 16 * i + 8);
    expect(fontNames(lying)).toBeUndefined();
    expect(projectFonts([{ path: "a.otf", data: lying }, { path: "b.ttf", data: Buffer.alloc(0) }, { path: "c.otf", data: regular }])).toEqual([{ family: "Texpool Project Sans", style: "Regular", path: "c.otf" }]);
  });
});
