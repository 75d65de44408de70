// The pure parts of the outputs: the request's output fields, the page range, the zip writer and
// the reading of the installation's package list.
import { describe, expect, it } from "vitest";
import { parseLsR, providedInfo } from "../src/environment.ts";
import { MAX_IMAGE_PAGES, parseOutput } from "../src/output-spec.ts";
import { pageRange } from "../src/outputs.ts";
import type { Issue } from "../src/validate.ts";
import { zip } from "../src/zip.ts";
import { unzip } from "./outputs-zip.ts";
import { parseSynctexOutput, projectPath, recordedNames, synctexRoot } from "../src/synctex.ts";
import { parseSynctexQuery } from "../src/synctex-query.ts";

const parse = (b: Record<string, unknown>) => {
  const issues: Issue[] = [];
  return { spec: parseOutput(b, issues), issues };
};

describe("parseOutput", () => {
  it("defaults to the PDF and takes the image fields for png", () => {
    expect(parse({}).spec).toEqual({ kind: "pdf", dpi: 150, firstPage: 1, synctex: false });
    expect(parse({ output: "png", dpi: 72, firstPage: 3, lastPage: 3 + MAX_IMAGE_PAGES - 1 })).toEqual({ spec: { kind: "png", dpi: 72, firstPage: 3, lastPage: 22, synctex: false }, issues: [] });
    expect(parse({ output: "zip", synctex: true }).spec.synctex).toBe(true);
  });

  it("refuses the fields that do not apply to the output, and ranges over the cap", () => {
    expect(parse({ output: "png", firstPage: 1, lastPage: MAX_IMAGE_PAGES + 1 }).issues.map((i) => i.path)).toEqual(["lastPage"]);
    expect(parse({ output: "pdf", dpi: 100, firstPage: 2, synctex: true }).issues.map((i) => i.path)).toEqual(["dpi", "firstPage", "synctex"]);
    expect(parse({ output: "png", dpi: 150.5 }).issues.map((i) => i.path)).toEqual(["dpi"]);
    expect(parse({ output: ["png"] }).issues.map((i) => i.path)).toEqual(["output"]);
  });
});

describe("pageRange", () => {
  const png = parse({ output: "png" }).spec;
  it("runs from firstPage to lastPage, the document's end or the cap, whichever comes first", () => {
    expect(pageRange(png, 3)).toEqual({ first: 1, last: 3 });
    expect(pageRange(png, 100)).toEqual({ first: 1, last: MAX_IMAGE_PAGES });
    expect(pageRange({ ...png, firstPage: 2, lastPage: 9 }, 4)).toEqual({ first: 2, last: 4 });
    expect(pageRange({ ...png, firstPage: 5 }, 4)).toBe("firstPage is 5, but the document has 4 pages.");
  });
});

describe("zip", () => {
  it("writes an archive that reads back byte for byte, stored and deflated, with UTF-8 names", () => {
    const big = Buffer.from("line of a log\n".repeat(10_000));
    const bin = Buffer.from(Array.from({ length: 5000 }, (_, i) => (i * 7919) % 256));
    const archive = zip([
      { name: "thèse.log", data: big, deflate: true },
      { name: "page-1.png", data: bin },
      { name: "empty.txt", data: Buffer.alloc(0) },
    ]);
    expect(archive.length).toBeLessThan(big.length / 10); // the log was deflated
    const z = unzip(archive);
    expect(z.names).toEqual(["thèse.log", "page-1.png", "empty.txt"]);
    expect(z.read("thèse.log").equals(big)).toBe(true);
    expect(z.read("page-1.png").equals(bin)).toBe(true);
    expect(z.read("empty.txt").length).toBe(0);
    // a flipped byte of the stored data fails the CRC check (the reader checks what the writer wrote)
    const bad = zip([{ name: "x", data: bin }]);
    bad[40] = (bad[40] ?? 0) ^ 0xff;
    expect(() => unzip(bad)).toThrow(/CRC/);
  });
});

describe("the installation's packages", () => {
  it("takes .sty and .cls names from an ls-R database, the first of a name winning", () => {
    const m = new Map<string, string>();
    parseLsR("% ls-R\n./tex/latex/geometry:\ngeometry.sty\ngeometry.cfg\n\n./tex/latex/base:\narticle.cls\ngeometry.sty\n", "/t", m);
    expect([...m]).toEqual([["geometry.sty", "/t/tex/latex/geometry/geometry.sty"], ["article.cls", "/t/tex/latex/base/article.cls"]]);
  });

  it("reads the date and version of \\ProvidesPackage and \\ProvidesClass, the bracket on the same or a later line", () => {
    expect(providedInfo("\\ProvidesPackage{geometry}\n  [2020/01/02 v5.9 Page Geometry]", "geometry", "package")).toEqual({ date: "2020/01/02", version: "v5.9" });
    expect(providedInfo("\\ProvidesClass{article}\n%% a comment\n[2021/10/04 v1.4n Standard LaTeX document class]", "article", "class")).toEqual({ date: "2021/10/04", version: "v1.4n" });
    expect(providedInfo("\\ProvidesPackage{x}[2019-03-04 3.2 x]", "x", "package")).toEqual({ date: "2019-03-04", version: "3.2" });
    // another package's line, or text between the name and a bracket, says nothing of this one
    expect(providedInfo("\\ProvidesPackage{other}[2020/01/01 v1]", "x", "package")).toEqual({});
    expect(providedInfo("\\ProvidesPackage{x}\\RequirePackage{y}[2020/01/01]", "x", "package")).toEqual({});
  });
});

describe("SyncTeX queries", () => {
  it("finds the compile's root and main folder from the first input, in the sandbox and without it", () => {
    expect(synctexRoot("SyncTeX Version:1\nInput:1:/job/paper/./report.tex\nInput:2:/usr/x.cls\n")).toEqual({ root: "/job/", sub: "paper" });
    expect(synctexRoot("Input:1:/job/./main.tex\n")).toEqual({ root: "/job/", sub: "" });
    const host = `/tmp/texcompile-1/jobs/${"ab".repeat(16)}/`;
    expect(synctexRoot(`Input:1:${host}./main.tex\n`)).toEqual({ root: host, sub: "" });
    expect(synctexRoot("Input:1:/usr/share/texlive/x.tex\n")).toBeUndefined();
    expect(synctexRoot("not synctex")).toBeUndefined();
  });

  it("names a project file the ways the compile may have recorded it (SyncTeX does not resolve ..)", () => {
    expect(recordedNames("paper/chapters/two.tex", "/job/", "paper")).toEqual(["/job/paper/chapters/two.tex"]);
    expect(recordedNames("common/three.tex", "/job/", "paper/sub")).toEqual(["/job/common/three.tex", "/job/paper/sub/../../common/three.tex"]);
    expect(projectPath("/job/paper/../common/three.tex", "/job/")).toBe("common/three.tex");
    expect(projectPath("/job/../etc/passwd", "/job/")).toBeNull();
    expect(projectPath("/usr/share/texlive/article.cls", "/job/")).toBeNull();
  });

  it("reads the result blocks of synctex view and edit", () => {
    const view = "This is SyncTeX command line utility, version 1.5\nSyncTeX result begin\nOutput:/job/t.pdf\nPage:2\nx:1\ny:2\nh:133.5\nv:136.7\nW:343.7\nH:8.8\nbefore:\nSyncTeX result end\n";
    expect(parseSynctexOutput(view, "forward", "/job/")).toEqual([{ page: 2, x: 133.5, y: 136.7, width: 343.7, height: 8.8 }]);
    const edit = "SyncTeX result begin\nOutput:/job/t.pdf\nInput:/job/paper/./chapters/two.tex\nLine:3\nColumn:-1\nOffset:0\nSyncTeX result end\n";
    expect(parseSynctexOutput(edit, "reverse", "/job/")).toEqual([{ file: "paper/chapters/two.tex", line: 3, column: -1 }]);
    expect(parseSynctexOutput("SyncTeX result begin\nSyncTeX result end\n", "forward", "/job/")).toEqual([]);
  });

  it("takes either a source position or a PDF position, never both or half of one", () => {
    const q = (s: string) => parseSynctexQuery(new URLSearchParams(s));
    expect(q("file=a b/c.tex&line=3")).toEqual({ ok: true, value: { kind: "forward", file: "a b/c.tex", line: 3, column: 0 } });
    expect(q("page=2&x=10.5&y=20")).toEqual({ ok: true, value: { kind: "reverse", page: 2, x: 10.5, y: 20 } });
    for (const bad of ["", "file=a.tex&line=1&page=1", "file=a.tex", "file=/etc/passwd&line=1", "line=-1&file=a.tex", "page=1&x=1", "page=1&x=NaN&y=1", "page=1&x=1e3&y=1"]) expect(q(bad).ok, bad).toBe(false);
  });
});
