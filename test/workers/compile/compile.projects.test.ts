// Projects as they are on disk, through the API: names with spaces and umlauts, a .latexmkrc that
// names the main file, \jobname as the main file's name, `..` from the main file's folder.
import { describe, expect, it } from "vitest";
import { createKey, errorOf } from "../helpers.ts";
import { compileSync } from "./helpers.ts";

/** The page count tells the outcome: each test's document has a second page only when its check held. */
const pages = (res: Response) => Number(res.headers.get("X-Compile-Pages"));

describe("compile: projects as they are on disk", () => {
  it("names with spaces and letters beyond ASCII, dotfiles, `..` and \\jobname", async () => {
    const k = await createKey("pro");
    const tag = crypto.randomUUID();
    const res = await compileSync(k.key, {
      mainPath: "Bericht Übersicht/Kapitel/bericht.tex",
      source: `\\documentclass{article}\\begin{document}\\input{../../Gemeinsam/Einführung}\\IfFileExists{\\jobname.tex}{\\newpage found}{}\\ ${tag}\\end{document}`,
      files: [
        { path: "Gemeinsam/Einführung.tex", content: "Grüße." },
        { path: ".gitignore", content: "*.aux\n" },
      ],
    });
    expect(res.status).toBe(200);
    // two pages: the \jobname.tex test found the main file under its own name
    expect(pages(res)).toBe(2);
    await res.arrayBuffer();
  });

  it("a .latexmkrc names the main file when the request does not", async () => {
    const k = await createKey("pro");
    const res = await compileSync(k.key, {
      source: `\\documentclass{article}\\begin{document}Start.\\IfFileExists{thesis.tex}{\\newpage found}{} ${crypto.randomUUID()}\\end{document}`,
      files: [{ path: ".latexmkrc", content: "@default_files = ('thesis.tex');\nsystem('touch pwned');\n" }],
    });
    expect(res.status).toBe(200);
    expect(pages(res)).toBe(2);
    expect(decodeURIComponent(res.headers.get("X-Compile-Project-Warnings") ?? "")).toContain("ignored system('touch pwned')");
    await res.arrayBuffer();
  });

  it.each([
    ["a/../b.tex", "files.0.path"],
    ["x\u0007.tex", "files.0.path"],
  ])("%j is a 400", async (path, field) => {
    const k = await createKey("pro");
    const res = await compileSync(k.key, { source: "x", files: [{ path, content: "x" }] });
    expect(res.status).toBe(400);
    const err = (await errorOf(res)) as unknown as { details: { issues: Array<{ path: string }> } };
    expect(err.details.issues.map((i) => i.path)).toContain(field);
  });
});
