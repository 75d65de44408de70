// Unit tests: log parser on real logs (fixtures written by TeX Live 2022), request validation.
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { texHostPath } from "../src/texroot.ts";
import { loadConfig } from "../src/config.ts";
import { logAsksRerun, logTail, parseLog } from "../src/log-parser.ts";
import { checkPath, validateCompile } from "../src/validate.ts";
import { fixture } from "./helpers.ts";

describe("log parser (real logs)", () => {
  it("undefined control sequence", () => {
    const p = parseLog(fixture("undefined.pdflatex.log"));
    expect(p.errors[0]).toEqual({ message: "Undefined control sequence.", file: "undefined.tex", line: 5 });
    expect(p.errors).toHaveLength(1);
  });
  it("missing package", () => {
    const p = parseLog(fixture("missingpkg.pdflatex.log"));
    expect(p.errors[0]?.message).toBe("LaTeX Error: File `doesnotexist.sty' not found.");
    expect(p.errors[0]?.file).toBe("missingpkg.tex");
  });
  it("warnings: undefined references and citations, overfull boxes, page count", () => {
    const p = parseLog(fixture("warnings.pdflatex.log"));
    expect(p.errors).toEqual([]);
    const kinds = p.warnings.map((w) => w.kind);
    expect(kinds).toContain("undefined_reference");
    expect(kinds).toContain("undefined_citation");
    expect(kinds).toContain("overfull_box");
    expect(p.warnings.find((w) => w.kind === "overfull_box")?.line).toBe(4);
    expect(p.warnings.find((w) => w.kind === "undefined_reference")?.line).toBe(3);
    expect(p.pages).toBe(1);
  });
  it("rerun requests", () => {
    expect(logAsksRerun("LaTeX Warning: Label(s) may have changed. Rerun to get cross-references right.")).toBe(true);
    expect(logAsksRerun("Package rerunfilecheck Warning: File `main.out' has changed.\n(rerunfilecheck)                Rerun to get outlines right")).toBe(true);
    expect(logAsksRerun(fixture("warnings.pdflatex.log"))).toBe(false);
  });
  it("log tail is bounded and starts at a line", () => {
    const log = Array.from({ length: 1000 }, (_, i) => `line ${i}`).join("\n");
    const t = logTail(log, 100);
    expect(Buffer.byteLength(t)).toBeLessThanOrEqual(100);
    expect(t.startsWith("line ")).toBe(true);
    expect(t.endsWith("line 999")).toBe(true);
  });
});

describe("validation", () => {
  const limits = loadConfig({}).limits;
  it("accepts good paths and refuses bad ones", () => {
    // names as projects have them on disk: dotfiles, spaces, letters of any script
    for (const p of ["a.tex", "dir/b.png", "x_y-z+1.bib", ".latexmkrc", "a b/c d.tex", "Übersicht/résumé.tex", "a/.git/x"]) expect(checkPath(p)).toBeUndefined();
    for (const p of ["", "/etc/passwd", "../x", "a/../b", "a//b", "./a", "a/./b", "a\\b", "a\u0000b", "a\u202eb", ".texmf-var/x"]) expect(checkPath(p)).toBeDefined();
  });
  it("reports each bad field", () => {
    const v = validateCompile({ engine: "tex", source: "", files: [{ path: "../x", content: "", encoding: "base64" }, { path: "b.png", content: "!!!", encoding: "base64" }], extra: 1 }, limits);
    expect(v.ok).toBe(false);
    if (v.ok) return;
    const paths = v.issues.map((i) => i.path);
    expect(paths).toEqual(expect.arrayContaining(["engine", "source", "files[0].path", "files[1].content", "extra"]));
  });
  it("refuses main.tex in files, duplicates, and too many files", () => {
    const v = validateCompile({ engine: "pdflatex", source: "x", files: [{ path: "main.tex", content: "" }, { path: "a", content: "" }, { path: "a", content: "" }] }, limits);
    expect(v.ok).toBe(false);
    const v2 = validateCompile({ engine: "pdflatex", source: "x", files: Array.from({ length: limits.maxFiles + 1 }, (_, i) => ({ path: `f${i}`, content: "" })) }, limits);
    expect(v2.ok).toBe(false);
  });
  it("decodes base64", () => {
    const v = validateCompile({ engine: "xelatex", source: "x", files: [{ path: "a.bin", content: Buffer.from([0, 1, 2, 255]).toString("base64"), encoding: "base64" }] }, limits);
    expect(v.ok && [...(v.value.files[0]?.data ?? [])]).toEqual([0, 1, 2, 255]);
  });
});

describe("texHostPath", () => {
  it("follows the root filesystem's links inside the root, absolute and relative, never out of it", () => {
    const root = mkdtempSync(path.join(os.tmpdir(), "texroot-"));
    try {
      mkdirSync(path.join(root, "var/lib/texmf"), { recursive: true });
      mkdirSync(path.join(root, "usr/share/texlive/texmf-dist"), { recursive: true });
      writeFileSync(path.join(root, "var/lib/texmf/ls-R-TEXLIVEDIST"), "x");
      symlinkSync("/var/lib/texmf/ls-R-TEXLIVEDIST", path.join(root, "usr/share/texlive/texmf-dist/ls-R"));
      symlinkSync("../../var", path.join(root, "usr/share/v"));
      symlinkSync("/../../../../etc", path.join(root, "usr/up"));
      expect(texHostPath("/usr/share/texlive/texmf-dist/ls-R", root)).toBe(path.join(root, "var/lib/texmf/ls-R-TEXLIVEDIST"));
      expect(texHostPath("/usr/share/v/lib/texmf", root)).toBe(path.join(root, "var/lib/texmf"));
      expect(texHostPath("/usr/up/passwd", root)).toBe(path.join(root, "etc/passwd"));
      expect(texHostPath("/nowhere/../usr/x", root)).toBe(path.join(root, "usr/x"));
      symlinkSync("loop", path.join(root, "loop"));
      expect(texHostPath("/loop/a", root).startsWith(root)).toBe(true);
      expect(texHostPath("/var/lib", undefined)).toBe("/var/lib");
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
