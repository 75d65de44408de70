// More than a PDF: pages as PNG or SVG (converted in the job's sandbox), the full log, a zip of the
// outputs with SyncTeX, the PDF of a document with errors (haltOnError: false), and the
// installation's environment.
import { spawnSync } from "node:child_process";
import { gunzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { compile, doc, expectPdf, pdfText, type Result } from "./helpers.ts";
import { unzip } from "./outputs-zip.ts";
import { sharedServer } from "./shared-server.ts";
import { resolveTexRoot, texHostPath } from "../src/texroot.ts";

const s = sharedServer();

/** Three pages of 612 x 792 PostScript points (US letter), numbered in big type. */
const threePages = doc(["One", "Two", "Three"].map((w) => `{\\Huge Page ${w}}`).join("\n\\newpage\n"), "\\usepackage[papersize={612bp,792bp}]{geometry}\n");

/** A PNG's width and height, from its IHDR chunk. */
function pngSize(b: Buffer): { width: number; height: number } {
  expect(b.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
  return { width: b.readUInt32BE(16), height: b.readUInt32BE(20) };
}

function ok(r: Result, type: string): void {
  if (r.status !== 200) throw new Error(`expected 200, got ${r.status}: ${r.body.toString().slice(0, 2000)}`);
  expect(r.headers.get("content-type")).toBe(type);
}

describe("output: png and svg", () => {
  it("one page is the PNG itself, at the resolution asked for", async () => {
    const r = await compile(s.url, { source: threePages, output: "png", dpi: 72, firstPage: 2, lastPage: 2 });
    ok(r, "image/png");
    expect(r.headers.get("x-output-pages")).toBe("2-2");
    expect(r.headers.get("x-compile-pages")).toBe("3");
    // letter paper at 72 dpi: one pixel per point
    expect(pngSize(r.body)).toEqual({ width: 612, height: 792 });
    const twice = await compile(s.url, { source: threePages, output: "png", dpi: 144, firstPage: 2, lastPage: 2 });
    ok(twice, "image/png");
    expect(pngSize(twice.body)).toEqual({ width: 1224, height: 1584 });
  });

  it("several pages are a zip of page-<n>.png, the whole document by default", async () => {
    const r = await compile(s.url, { source: threePages, output: "png", dpi: 20 });
    ok(r, "application/zip");
    expect(r.headers.get("x-output-pages")).toBe("1-3");
    const z = unzip(r.body);
    expect(z.names).toEqual(["page-1.png", "page-2.png", "page-3.png"]);
    for (const n of z.names) expect(pngSize(z.read(n)).width).toBe(Math.round((612 * 20) / 72));
    // the pages differ (each has its own number)
    expect(z.read("page-1.png").equals(z.read("page-3.png"))).toBe(false);
  });

  it("a page as SVG, its text as glyph outlines of the page's size", async () => {
    const r = await compile(s.url, { source: threePages, output: "svg", firstPage: 3, lastPage: 3 });
    ok(r, "image/svg+xml");
    const svg = r.body.toString("utf8");
    expect(svg).toMatch(/^<\?xml/);
    expect(svg).toMatch(/<svg[^>]*width="612(pt)?"[^>]*height="792(pt)?"/);
    expect(svg).toContain("<path");
  });

  it("a main file in a subfolder, with a name of spaces and accents, is converted too", async () => {
    const r = await compile(s.url, { source: threePages, mainPath: "chap ters/thèse.tex", output: "svg", firstPage: 1, lastPage: 2 });
    ok(r, "application/zip");
    expect(unzip(r.body).names).toEqual(["page-1.svg", "page-2.svg"]);
  });

  it("a page past the document's end is 422 page_out_of_range, naming the page count", async () => {
    const r = await compile(s.url, { source: threePages, output: "png", firstPage: 4 });
    expect(r.status).toBe(422);
    expect(r.json.error.code).toBe("page_out_of_range");
    expect(r.json.error.message).toContain("3 pages");
  });

  it("a page too large to rasterise is a 422 from the sandboxed converter, not a server error", async () => {
    // 16000 x 16000 pt at 300 dpi: 66667 pixels a side, past cairo's limit and the job's memory cap
    const huge = doc("Huge.", "\\usepackage[papersize={16000bp,16000bp}]{geometry}\n");
    const r = await compile(s.url, { source: huge, output: "png", dpi: 300 });
    expect(r.status).toBe(422);
    expect(r.json.error.code).toBe("compile_error");
    expect(r.json.error.message).toContain("Page 1 could not be converted to PNG");
  });

  it("a range past the document's end stops at its last page", async () => {
    const r = await compile(s.url, { source: threePages, output: "png", dpi: 10, firstPage: 3, lastPage: 9 });
    ok(r, "image/png");
    expect(r.headers.get("x-output-pages")).toBe("3-3");
  });
});

describe("output: log and zip", () => {
  it("log is the whole log, not its tail", async () => {
    // ~60 KiB of log lines, far more than an error's log tail
    const noise = Array.from({ length: 1500 }, (_, i) => `\\typeout{noise line ${i} ........................}`).join("\n");
    const r = await compile(s.url, { source: doc(`Hello. ${noise}`), output: "log" });
    ok(r, "text/plain; charset=utf-8");
    const log = r.body.toString("utf8");
    expect(log.startsWith("This is pdfTeX")).toBe(true);
    expect(log).toContain("noise line 0 ");
    expect(log).toContain("noise line 1499 ");
    expect(log.length).toBeGreaterThan(60_000);
  });

  it("zip holds the PDF and the log named after the job, and the SyncTeX file when asked", async () => {
    const r = await compile(s.url, { source: threePages, mainPath: "paper/report.tex", output: "zip", synctex: true });
    ok(r, "application/zip");
    const z = unzip(r.body);
    expect(z.names).toEqual(["report.pdf", "report.log", "report.synctex.gz"]);
    expect(pdfText(z.read("report.pdf"))).toContain("Page Two");
    expect(z.read("report.log").toString()).toContain("Output written on report.pdf (3 pages");
    const sync = gunzipSync(z.read("report.synctex.gz")).toString("utf8");
    expect(sync).toMatch(/^SyncTeX Version:/);
    expect(sync).toContain("report.tex");
    const plain = await compile(s.url, { source: threePages, output: "zip" });
    expect(unzip(plain.body).names).toEqual(["main.pdf", "main.log"]);
  });
});

describe("bad combinations are 400 before anything runs", () => {
  it.each([
    [{ output: "jpeg" }, "output"],
    [{ output: "png", dpi: 301 }, "dpi"],
    [{ output: "png", dpi: 9 }, "dpi"],
    [{ output: "svg", dpi: 100 }, "dpi"],
    [{ dpi: 100 }, "dpi"],
    [{ output: "png", firstPage: 1, lastPage: 21 }, "lastPage"],
    [{ output: "png", firstPage: 5, lastPage: 4 }, "lastPage"],
    [{ output: "png", firstPage: 0 }, "firstPage"],
    [{ output: "log", firstPage: 2 }, "firstPage"],
    [{ synctex: true }, "synctex"],
    [{ output: "zip", synctex: "yes" }, "synctex"],
    [{ haltOnError: "no" }, "haltOnError"],
  ])("%j: 400 on %s", async (extra, field) => {
    const r = await compile(s.url, { source: threePages, ...extra });
    expect(r.status).toBe(400);
    expect(r.json.error.details.issues.map((i: { path: string }) => i.path)).toContain(field);
  });
});

describe("haltOnError: false", () => {
  const broken = doc("Before the error. \\undefinedcommand After the error. \\newpage Second page.");

  it("answers the PDF of a document with errors, the errors as warnings", async () => {
    const halted = await compile(s.url, { source: broken });
    expect(halted.status).toBe(422);
    const r = await compile(s.url, { source: broken, haltOnError: false });
    expectPdf(r);
    expect(r.headers.get("x-compile-errors")).toBe("1");
    expect(r.headers.get("x-compile-pages")).toBe("2");
    const text = pdfText(r.body);
    expect(text).toContain("After the error.");
    expect(text).toContain("Second page.");
  });

  it("works on xelatex (its PDF driver runs after the errors) and with the log output", async () => {
    const r = await compile(s.url, { source: broken, engine: "xelatex", haltOnError: false, output: "log" });
    ok(r, "text/plain; charset=utf-8");
    expect(r.headers.get("x-compile-errors")).toBe("1");
    expect(r.body.toString()).toContain("Undefined control sequence");
  });

  it("a document that gives no PDF at all is still its compile error", async () => {
    const r = await compile(s.url, { source: "\\documentclass{article}\\begin{document}\\input{missing-file}\\end{document}", haltOnError: false });
    expect(r.status).toBe(422);
    expect(r.json.error.code).toBe("compile_error");
    expect(r.json.error.message).toContain("missing-file");
  });
});

describe("GET /environment", () => {
  it("reads TeX Live's version, the engines, the packages with their versions and the fonts from the installation", async () => {
    const r = await fetch(`${s.url}/environment`);
    expect(r.status).toBe(200);
    const env = (await r.json()) as { texlive: { version: string; banner: string }; engines: { name: string; version: string }[]; packages: { name: string; kind: string; date?: string; version?: string }[]; fonts: string[] };
    const banner = spawnSync("pdftex", ["--version"], { encoding: "utf8" }).stdout.split("\n")[0];
    expect(env.texlive.banner).toBe(banner);
    expect(env.texlive.version).toMatch(/^20\d\d$/);
    expect(env.engines.map((e) => e.name).sort()).toEqual(["lualatex", "pdflatex", "xelatex"]);
    expect(env.engines.find((e) => e.name === "xelatex")?.version).toContain("XeTeX");
    // geometry's own \ProvidesPackage line, as kpathsea finds the file
    const geometry = env.packages.find((p) => p.name === "geometry" && p.kind === "package");
    const file = spawnSync("kpsewhich", ["geometry.sty"], { encoding: "utf8" }).stdout.trim();
    const line = spawnSync("grep", ["-A1", "ProvidesPackage{geometry}", texHostPath(file, resolveTexRoot(process.env))], { encoding: "utf8" }).stdout;
    expect(geometry?.date).toMatch(/^\d{4}\/\d{2}\/\d{2}$/);
    expect(line).toContain(geometry!.date!);
    expect(line).toContain(geometry!.version!);
    expect(env.packages.some((p) => p.name === "article" && p.kind === "class")).toBe(true);
    expect(env.packages.length).toBeGreaterThan(1000);
    const families = spawnSync("fc-list", ["--format", "%{family[0]}\n"], { encoding: "utf8" }).stdout;
    expect(env.fonts.length).toBeGreaterThan(0);
    for (const f of env.fonts.slice(0, 5)) expect(families).toContain(f);
  });
});
