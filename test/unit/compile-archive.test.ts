import { gzipSync, zipSync } from "fflate";
import { describe, expect, it } from "vitest";
import { archiveProject, unpack } from "../../src/compile/archive/project.ts";
import { COMPILE_LIMITS as L } from "../../src/compile/limits.ts";
import { ApiError } from "../../src/platform/errors.ts";
import { bytes, tarGzOf, tarOf, zipOf } from "./archive-fixtures.ts";

const DOC = "\\documentclass{article}\n\\begin{document}\\input{chapters/one}\\end{document}\n";

/** The ApiError a call throws (status, code, message and details). */
function failure(f: () => unknown): ApiError {
  try {
    f();
  } catch (err) {
    if (err instanceof ApiError) return err;
    throw err;
  }
  throw new Error("did not throw");
}

describe("compile archives: unpacking", () => {
  it("a zip and a tar.gz give the same project: main file as source, text as utf8, binary as base64", () => {
    const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0xff, 0xfe, 0x00, 0x01]);
    const files = { "main.tex": DOC, "chapters/one.tex": "Grüße", "img/logo.png": png };
    const fromZip = archiveProject(zipOf(files));
    const fromTar = archiveProject(tarGzOf(Object.entries(files).map(([name, content]) => ({ name, content }))));
    for (const p of [fromZip, fromTar]) {
      expect(p.mainPath).toBe("main.tex");
      expect(p.source).toBe(DOC);
      expect(p.files).toEqual([
        { path: "chapters/one.tex", content: "Grüße", encoding: "utf8" },
        { path: "img/logo.png", content: btoa(String.fromCharCode(...png)), encoding: "base64" },
      ]);
    }
  });

  it("one folder holding everything is the project root; ./ and __MACOSX are dropped; pax and GNU long names are read", () => {
    const long = `${"d".repeat(120)}/file.tex`;
    const p = archiveProject(
      tarGzOf([
        { name: "./thesis/", type: "5" },
        { name: "./thesis/thesis.tex", content: DOC },
        { name: "./thesis/x", content: "long", pax: { path: `./thesis/${long}` } },
        { name: "././@LongLink", type: "L", content: `thesis/chapters/Ü ${"n".repeat(100)}.tex` },
        { name: "thesis/chapters/short", content: "gnu" },
      ]),
    );
    expect(p.mainPath).toBe("thesis.tex");
    expect(p.files.map((f) => f.path)).toEqual([long, `chapters/Ü ${"n".repeat(100)}.tex`]);
    const z = archiveProject(zipOf({ "proj/main.tex": DOC, "__MACOSX/proj/._main.tex": "fork", "proj/a.tex": "a" }));
    expect(z.mainPath).toBe("main.tex");
    expect(z.files.map((f) => f.path)).toEqual(["a.tex"]);
  });

  it("finds the main file as latexmk does: main.tex first, else the only root .tex with \\documentclass", () => {
    expect(archiveProject(zipOf({ "a.tex": DOC, "main.tex": DOC })).mainPath).toBe("main.tex");
    expect(archiveProject(zipOf({ "paper.tex": DOC, "sub/other.tex": DOC, "notes.tex": "% \\documentclass{x}\nno" })).mainPath).toBe("paper.tex");
    expect(archiveProject(zipOf({ "a.tex": DOC, "b.tex": DOC }), "b.tex").mainPath).toBe("b.tex");
    const none = failure(() => archiveProject(zipOf({ "notes.tex": "text", "sub/x.tex": DOC })));
    expect([none.status, none.code]).toEqual([422, "no_main_file"]);
    const two = failure(() => archiveProject(zipOf({ "a.tex": DOC, "b.tex": DOC })));
    expect([two.status, two.code, two.details.candidates]).toEqual([422, "ambiguous_main_file", ["a.tex", "b.tex"]]);
    expect(failure(() => archiveProject(zipOf({ "a.tex": DOC }), "b.tex")).code).toBe("main_file_not_found");
  });

  it.each([
    ["a zip symlink", () => zipOf({ "main.tex": DOC, "passwd": "/etc/passwd" }, { passwd: 0o120777 }), /symbolic link/],
    ["a tar symlink", () => tarGzOf([{ name: "main.tex", content: DOC }, { name: "passwd", type: "2", linkTo: "/etc/passwd" }]), /symbolic link/],
    ["a tar hard link", () => tarGzOf([{ name: "main.tex", content: DOC }, { name: "h", type: "1", linkTo: "main.tex" }]), /hard link/],
    ["a tar device", () => tarGzOf([{ name: "main.tex", content: DOC }, { name: "null", type: "3" }]), /not a regular file/],
    ["a zip ../ entry", () => zipOf({ "main.tex": DOC, "../evil.tex": "x" }), /out of the project/],
    ["a tar ../ entry", () => tarGzOf([{ name: "main.tex", content: DOC }, { name: "a/../../evil.tex", content: "x" }]), /out of the project/],
    ["an absolute path", () => tarGzOf([{ name: "main.tex", content: DOC }, { name: "/etc/evil.tex", content: "x" }]), /absolute path/],
    ["a duplicate name", () => tarGzOf([{ name: "main.tex", content: DOC }, { name: "Main.TEX", content: DOC }]), /twice/],
    ["a corrupt zip", () => zipOf({ "main.tex": DOC }).subarray(0, 40), /not a readable zip/],
    ["a corrupt gzip", () => tarGzOf([{ name: "main.tex", content: DOC }]).map((b, i) => (i > 12 ? b ^ 0x5a : b)), /gzip/],
    ["a tar with a bad checksum", () => gzipSync(tarOf([{ name: "main.tex", content: DOC }]).map((b, i) => (i === 5 ? 0x41 : b))), /checksum/],
    ["neither zip nor gzip", () => bytes("plain text"), /neither a zip nor/],
  ])("refuses %s with a 400", (_label, make, message) => {
    const err = failure(() => archiveProject(make()));
    expect(err.status).toBe(400);
    expect(err.message).toMatch(message);
  });

  it("holds the files limits while unpacking: count, total size, compression ratio (bombs stop early)", () => {
    const many = Object.fromEntries(Array.from({ length: L.maxFiles + 2 }, (_, i) => [`f${i}.tex`, "x"]));
    expect(failure(() => unpack(zipOf(many))).details.limit).toBe("files");
    // incompressible content past the total: stopped at the limit
    const noise = crypto.getRandomValues(new Uint8Array(65536));
    const big = new Uint8Array(L.maxTotalBytes + 1024).map((_, i) => noise[i % 65536]! ^ (i >> 16));
    expect(failure(() => unpack(tarGzOf([{ name: "big.bin", content: big }]))).details.limit).toBe("totalBytes");
    // 6 MiB of zeros (under the total) in a few KiB: refused by the ratio once 1 MiB is out.
    // A zip that declares 64 MiB is refused before inflating; a gzip of 64 MiB stops at the first limit.
    const zeros = new Uint8Array(6 * 1024 * 1024);
    const huge = new Uint8Array(64 * 1024 * 1024);
    const bombs = [zipSync({ "bomb.tex": zeros }), gzipSync(zeros), zipSync({ "bomb.tex": huge }), gzipSync(huge)];
    const t0 = Date.now();
    expect(bombs.map((b) => failure(() => unpack(b)).details.limit)).toEqual(["compressionRatio", "compressionRatio", "totalBytes", "compressionRatio"]);
    // each stopped after about 1 MiB of output, not 64
    expect(Date.now() - t0).toBeLessThan(3_000);
  });
});
