import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { cacheKey } from "../../src/compile/cache.ts";
import type { CompileInput } from "../../src/compile/compiler.ts";

const base: CompileInput = { engine: "pdflatex", source: "\\documentclass{article}\\begin{document}x\\end{document}" };

describe("compile cache key", () => {
  it("is a sha256 hex digest, stable for the same input", async () => {
    const a = await cacheKey("acc_1", base);
    expect(a).toMatch(/^[0-9a-f]{64}$/);
    expect(await cacheKey("acc_1", { ...base })).toBe(a);
  });

  it("changes with the account, engine, one byte of source, a file's path, content or encoding", async () => {
    const a = await cacheKey("acc_1", { ...base, files: [{ path: "a.tex", content: "x", encoding: "utf8" }] });
    const variants: Array<[string, CompileInput]> = [
      ["acc_2", { ...base, files: [{ path: "a.tex", content: "x", encoding: "utf8" }] }],
      ["acc_1", { ...base, engine: "xelatex", files: [{ path: "a.tex", content: "x", encoding: "utf8" }] }],
      ["acc_1", { ...base, source: base.source + " ", files: [{ path: "a.tex", content: "x", encoding: "utf8" }] }],
      ["acc_1", { ...base, files: [{ path: "b.tex", content: "x", encoding: "utf8" }] }],
      ["acc_1", { ...base, files: [{ path: "a.tex", content: "y", encoding: "utf8" }] }],
      ["acc_1", { ...base, files: [{ path: "a.tex", content: "eA==", encoding: "base64" }] }],
      ["acc_1", base],
    ];
    const keys = await Promise.all(variants.map(([acc, input]) => cacheKey(acc, input)));
    expect(new Set([a, ...keys]).size).toBe(variants.length + 1);
  });

  it("changes with mainPath and draft; their defaults given or left out are one key", async () => {
    const a = await cacheKey("acc", base);
    expect(await cacheKey("acc", { ...base, mainPath: "main.tex", draft: false })).toBe(a);
    const keys = await Promise.all([cacheKey("acc", { ...base, mainPath: "thesis/main.tex" }), cacheKey("acc", { ...base, mainPath: "other.tex" }), cacheKey("acc", { ...base, draft: true })]);
    expect(new Set([a, ...keys]).size).toBe(4);
  });

  it("changes with shellEscape; off given or left out is the key it always was", async () => {
    const a = await cacheKey("acc", base);
    expect(await cacheKey("acc", { ...base, shellEscape: false })).toBe(a);
    expect(await cacheKey("acc", { ...base, shellEscape: true })).not.toBe(a);
  });

  it("ignores timeoutMs and the order of files", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(fc.record({ path: fc.stringMatching(/^[a-z]{1,8}\.tex$/), content: fc.string(), encoding: fc.constant("utf8" as const) }), { selector: (f) => f.path, maxLength: 6 }),
        fc.integer({ min: 1000, max: 60000 }),
        async (files, timeoutMs) => {
          const shuffled = [...files].reverse();
          expect(await cacheKey("acc", { ...base, files, timeoutMs })).toBe(await cacheKey("acc", { ...base, files: shuffled }));
        },
      ),
      { numRuns: 50 },
    );
  });

  it("cannot be confused by field boundaries (canonical, not concatenated)", async () => {
    const a = await cacheKey("acc", { engine: "pdflatex", source: "ab", files: [{ path: "c.tex", content: "", encoding: "utf8" }] });
    const b = await cacheKey("acc", { engine: "pdflatex", source: "a", files: [{ path: "c.tex", content: "b", encoding: "utf8" }] });
    expect(a).not.toBe(b);
  });
});

describe("compile cache key: outputs", () => {
  it("a PDF's key is the one it had before outputs existed (the canonical array, nothing appended)", async () => {
    const files = [{ path: "a.tex", content: "x", encoding: "utf8" as const }];
    const before = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(JSON.stringify(["compile-cache/v2", "acc", "pdflatex", "main.tex", false, base.source, [["a.tex", "utf8", "x"]]])));
    const hex = [...new Uint8Array(before)].map((b) => b.toString(16).padStart(2, "0")).join("");
    expect(await cacheKey("acc", { ...base, files })).toBe(hex);
  });

  it("changes with the output, its dpi, pages and synctex, and with haltOnError: false; defaults spelled out are one key", async () => {
    const a = await cacheKey("acc", base);
    const png = await cacheKey("acc", { ...base, output: "png" });
    expect(await cacheKey("acc", { ...base, output: "png", dpi: 150, firstPage: 1 })).toBe(png);
    const variants: CompileInput[] = [
      { ...base, output: "png", dpi: 72 },
      { ...base, output: "png", firstPage: 2 },
      { ...base, output: "png", lastPage: 3 },
      { ...base, output: "svg" },
      { ...base, output: "log" },
      { ...base, output: "zip" },
      { ...base, output: "zip", synctex: true },
      { ...base, haltOnError: false },
      { ...base, output: "png", haltOnError: false },
    ];
    const keys = await Promise.all(variants.map((v) => cacheKey("acc", v)));
    expect(new Set([a, png, ...keys]).size).toBe(variants.length + 2);
  });
});
