// Projects sent as archives: the Worker unpacks a zip, a tar.gz or a multipart form into the JSON
// request's fields, and the compile follows the JSON path (limits, cache, compiler).
import { describe, expect, it } from "vitest";
import { COMPILE_LIMITS as L } from "../../../src/compile/limits.ts";
import { api, createKey, errorOf } from "../helpers.ts";
import { tarGzOf, zipOf } from "../../unit/archive-fixtures.ts";
import { isPdf, waitForJob } from "./helpers.ts";

/** A real multi-file project: a chapter, a bibliography-free macro file and a class option file. */
function project(tag: string): Record<string, string> {
  return {
    "main.tex": `\\documentclass{article}\n\\input{macros}\n\\begin{document}\n\\title{Archive ${tag}}\\maketitle\n\\include{chapters/intro}\n\\include{chapters/results}\n\\end{document}\n`,
    "macros.tex": "\\newcommand{\\project}{Archived project}\n",
    "chapters/intro.tex": "\\section{Intro}\\project{} starts here.\n",
    "chapters/results.tex": "\\section{Results}\\newpage Second page.\n",
  };
}

const send = (key: string, body: BodyInit, type?: string, path = "/v1/compile/sync") =>
  api(path, { method: "POST", key, body, headers: type ? { "Content-Type": type } : {} });

function form(archive: Uint8Array, name: string, options?: unknown): FormData {
  const f = new FormData();
  f.set("archive", new File([archive], name));
  if (options !== undefined) f.set("options", JSON.stringify(options));
  return f;
}

describe("compile: project archives", () => {
  it.each([
    ["zip", "application/zip", (p: Record<string, string>) => zipOf(p)],
    ["tar.gz", "application/gzip", (p: Record<string, string>) => tarGzOf(Object.entries(p).map(([name, content]) => ({ name: `paper/${name}`, content })))],
  ])("a %s of a multi-file project compiles, every file found", async (_kind, type, make) => {
    const k = await createKey("pro");
    const res = await send(k.key, make(project(crypto.randomUUID())), type);
    expect(res.status).toBe(200);
    // title, intro and results (\include starts a page; results has two): every file was found
    expect(res.headers.get("X-Compile-Pages")).toBe("4");
    expect(isPdf(await res.arrayBuffer())).toBe(true);
  });

  it("multipart with options (engine, mainPath, output) and the async route", async () => {
    const k = await createKey("pro");
    const files = { ...project(crypto.randomUUID()), "other.tex": "\\documentclass{article}\\begin{document}Other\\end{document}" };
    const res = await send(k.key, form(zipOf(files), "p.zip", { mainPath: "other.tex", engine: "xelatex", output: "log" }));
    expect(res.status).toBe(200);
    expect(res.headers.get("X-Engine")).toBe("xelatex");
    expect(await res.text()).toContain("other.tex");
    const job = await send(k.key, form(zipOf(project(crypto.randomUUID())), "p.zip"), undefined, "/v1/compile/async");
    expect(job.status).toBe(202);
    const done = await waitForJob(k.key, ((await job.json()) as { id: string }).id, 60_000);
    expect([done.status, done.pages]).toEqual(["succeeded", 4]);
  });

  it.each([
    ["a corrupt archive", () => zipOf(project("x")).subarray(0, 100), 400, "invalid_request"],
    ["no main file", () => zipOf({ "notes.tex": "no class here" }), 422, "no_main_file"],
    ["two main files", () => zipOf({ "a.tex": project("a")["main.tex"]!, "b.tex": project("b")["main.tex"]! }), 422, "ambiguous_main_file"],
    ["too many files", () => zipOf(Object.fromEntries([...Array(L.maxFiles + 2).keys()].map((i) => [`f${i}.tex`, "x"]))), 413, "payload_too_large"],
    ["a zip bomb", () => zipOf({ "main.tex": project("x")["main.tex"]!, "bomb.tex": new Uint8Array(6 * 1024 * 1024) }), 413, "payload_too_large"],
    ["a ../ entry", () => zipOf({ "main.tex": project("x")["main.tex"]!, "../../escape.tex": "x" }), 400, "invalid_request"],
    ["an absolute path", () => tarGzOf([{ name: "main.tex", content: project("x")["main.tex"]! }, { name: "/etc/x.tex", content: "x" }]), 400, "invalid_request"],
    ["a symlink", () => tarGzOf([{ name: "main.tex", content: project("x")["main.tex"]! }, { name: "key.tex", type: "2", linkTo: "/etc/passwd" }]), 400, "invalid_request"],
  ])("%s is refused as the JSON path would be", async (_label, make, status, code) => {
    const k = await createKey("pro");
    const res = await send(k.key, make() as Uint8Array<ArrayBuffer>, "application/zip");
    expect(res.status).toBe(status);
    expect((await errorOf(res)).code).toBe(code);
  });

  it("too large, as the JSON path answers it; options may not carry the project; other types stay 415", async () => {
    const k = await createKey("pro");
    const noise = crypto.getRandomValues(new Uint8Array(65536));
    const big = new Uint8Array(L.maxTotalBytes + 1).map((_, i) => noise[i % 65536]! ^ (i >> 16));
    const res = await send(k.key, zipOf({ "main.tex": project("x")["main.tex"]!, "big.bin": big.subarray(0, 5 * 1024 * 1024), "big2.bin": big.subarray(5 * 1024 * 1024) }), "application/zip");
    expect(res.status).toBe(413);
    expect(await errorOf(res)).toMatchObject({ code: "payload_too_large", limit: "totalBytes" });
    const bad = await send(k.key, form(zipOf(project("x")), "p.zip", { source: "x" }));
    expect(bad.status).toBe(400);
    expect((await errorOf(bad)).message).toContain("options");
    const badMain = await send(k.key, form(zipOf(project("x")), "p.zip", { mainPath: 5 }));
    expect([badMain.status, (await errorOf(badMain)).message]).toEqual([400, expect.stringContaining("mainPath")]);
    expect((await send(k.key, zipOf(project("x")), "text/plain")).status).toBe(415);
  });
});
