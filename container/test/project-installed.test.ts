// What real projects need installed: fonts no Linux has, asked for by name ("Times New Roman",
// "Arial", "Helvetica"), set in metric-compatible free substitutes (fontspec families of
// container/texmf, installed in TEXMFLOCAL, and fontconfig aliases); pstricks; fontawesome6, which
// Debian's TeX Live leaves out (container/texmf-fallback stands in).
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { resolveTexRoot } from "../src/texroot.ts";
import { compile, expectPdf, pdfText } from "./helpers.ts";
import { sharedServer } from "./shared-server.ts";

// the compile server every job-only test file shares (vitest.config.ts)
const s = sharedServer();

function embedded(pdf: Buffer): string {
  const dir = mkdtempSync(path.join(tmpdir(), "installed-test-"));
  try {
    writeFileSync(path.join(dir, "x.pdf"), pdf);
    return spawnSync("pdffonts", [path.join(dir, "x.pdf")], { encoding: "utf8" }).stdout;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const doc = (font: string) => `\\documentclass{article}\n\\usepackage{fontspec}\n\\setmainfont{${font}}\n\\begin{document}\nSet in ${font}, \\textbf{bold} and \\textit{italic}.\n\\end{document}\n`;

describe.each(["xelatex", "lualatex"] as const)("%s: fonts by the names documents ask for", (engine) => {
  it.each([
    ["Times New Roman", "LiberationSerif"],
    ["Arial", "LiberationSans"],
    ["Helvetica", "TeXGyreHeros"],
  ])("%s is set in %s", async (font, substitute) => {
    const r = await compile(s.url, { engine, source: doc(font) });
    expectPdf(r);
    expect(pdfText(r.body)).toContain(`Set in ${font}`);
    const fonts = embedded(r.body);
    expect(fonts).toContain(substitute);
    expect(fonts.toLowerCase()).toContain("bold");
  });

  it("a name that is neither installed nor a known alias is still an error", async () => {
    const r = await compile(s.url, { engine, source: doc("Texpool No Such Font") });
    expect(r.status).toBe(422);
  });
});

describe("pstricks", () => {
  const pst = "\\documentclass{article}\n\\usepackage{pstricks}\n\\begin{document}\nA figure:\n\\begin{pspicture}(0,0)(2,2)\\psline(0,0)(2,2)\\pscircle(1,1){0.5}\\end{pspicture}\n\\end{document}\n";
  it.each(["xelatex", "lualatex"] as const)("%s draws a pspicture", async (engine) => {
    const r = await compile(s.url, { engine, source: pst });
    expectPdf(r);
    expect(pdfText(r.body)).toContain("A figure:");
  });
});

// Debian's TeX Live has no fontawesome6: container/texmf-fallback's stands in where the installation
// has none (its names and commands over fontawesome5's glyphs), so CV templates written for it compile
describe("fontawesome6", () => {
  const fa = "\\documentclass{article}\n\\usepackage{fontawesome6}\n\\begin{document}\nIcons: \\faGithub{} \\faEnvelope{} \\faCalendarDays{} \\faHouse{} \\faLocationDot{} \\faIcon{square-github} \\faIcon[regular]{envelope} \\faXTwitter\n\\end{document}\n";
  it.each(["pdflatex", "xelatex", "lualatex"] as const)("%s sets Font Awesome 6's names and commands in Font Awesome glyphs", async (engine) => {
    const r = await compile(s.url, { engine, source: fa });
    expectPdf(r);
    expect(pdfText(r.body)).toContain("Icons:");
    expect(embedded(r.body).toLowerCase()).toMatch(/fontawesome/);
  });

  it("an icon no Font Awesome glyph stands for is an error naming it", async () => {
    const r = await compile(s.url, { source: "\\documentclass{article}\n\\usepackage{fontawesome6}\n\\begin{document}\n\\faIcon{texpool-no-such-icon}\n\\end{document}\n" });
    expect(r.status).toBe(422);
    expect(r.body.toString()).toContain("texpool-no-such-icon");
  });
});

describe("the installation", () => {
  it("is TeX Live 2024 or later, with the substitutes fontconfig answers the missing names with", async () => {
    const r = await fetch(`${s.url}/environment`);
    const env = (await r.json()) as { texlive: { version: string }; fonts: string[] };
    expect(Number(env.texlive.version), `TEX_ROOT ${resolveTexRoot(process.env) ?? "host"}`).toBeGreaterThanOrEqual(2024);
    // Debian's release of TeX Live, where dpkg knows it (trixie: 2024.20250309, "TeX Live 2025/dev" in its banner)
    const root = resolveTexRoot(process.env);
    const deb = spawnSync("dpkg-query", [...(root ? [`--admindir=${root}/var/lib/dpkg`] : []), "-W", "-f=${Version}", "texlive-base"], { encoding: "utf8" }).stdout;
    if (/^\d{4}\./.test(deb)) expect(env.texlive.version).toBe(deb.slice(0, 4));
    for (const f of ["Liberation Serif", "Liberation Sans", "TeX Gyre Heros", "TeX Gyre Termes"]) expect(env.fonts).toContain(f);
    // what xelatex's fontspec asks fontconfig for, through the same wrappers the tests run TeX with
    const match = spawnSync("fc-match", ["-f", "%{family[0]}", "Times New Roman"], { encoding: "utf8" }).stdout;
    expect(match).toBe("Liberation Serif");
  });
});
