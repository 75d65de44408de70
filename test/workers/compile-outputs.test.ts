// More than a PDF through the API: page images, the log, a zip with SyncTeX, the PDF despite
// errors, the result cache and async jobs for them, and the compiler's environment.
import { describe, expect, it } from "vitest";
import { api, createKey, errorOf } from "./helpers.ts";
import { compileSync, isPdf, type JobBody, submit, uniqueDoc, waitForJob } from "./compile/helpers.ts";

/** Three pages of 612 x 792 pt (US letter), no other test compiles it. */
const threePages = () =>
  `% ${crypto.randomUUID()}\n\\documentclass{article}\\usepackage[papersize={612bp,792bp}]{geometry}\\begin{document}One\\newpage Two\\newpage Three\\end{document}`;

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
const pngWidth = (b: ArrayBuffer) => new DataView(b).getUint32(16);
const isPng = (b: ArrayBuffer) => PNG_SIGNATURE.every((v, i) => new Uint8Array(b)[i] === v);
/** A zip's entry names, from the file names its central directory lists after each PK\1\2 record. */
function zipNames(b: ArrayBuffer): string[] {
  const v = new DataView(b);
  const bytes = new Uint8Array(b);
  const names: string[] = [];
  for (let i = 0; i + 46 <= b.byteLength; i++) {
    if (v.getUint32(i, true) !== 0x02014b50) continue;
    const len = v.getUint16(i + 28, true);
    names.push(new TextDecoder().decode(bytes.subarray(i + 46, i + 46 + len)));
    i += 45 + len;
  }
  return names;
}

function expectInert(res: Response) {
  expect(res.headers.get("X-Content-Type-Options")).toBe("nosniff");
  expect(res.headers.get("Content-Security-Policy")).toBe("sandbox; default-src 'none'");
}

describe("compile outputs: sync", () => {
  it("png: one page is the image at the dpi asked for; a repeat is a cache HIT of the same type and pages", async () => {
    const k = await createKey("pro");
    const body = { source: threePages(), output: "png", dpi: 72, firstPage: 2, lastPage: 2 };
    const res = await compileSync(k.key, body);
    expect(res.status).toBe(200);
    expect(res.headers.get("Content-Type")).toBe("image/png");
    expect(res.headers.get("X-Output-Pages")).toBe("2-2");
    expect(res.headers.get("X-Compile-Pages")).toBe("3");
    expect(res.headers.get("X-Cache")).toBe("MISS");
    expectInert(res);
    const png = await res.arrayBuffer();
    expect(isPng(png)).toBe(true);
    expect(pngWidth(png)).toBe(612);
    const again = await compileSync(k.key, body);
    expect(again.headers.get("X-Cache")).toBe("HIT");
    expect(again.headers.get("Content-Type")).toBe("image/png");
    expect(again.headers.get("X-Output-Pages")).toBe("2-2");
    expect(new Uint8Array(await again.arrayBuffer())).toEqual(new Uint8Array(png));
  });

  it("an idempotent replay of an image answer keeps its type and its X-Output-Pages, X-Compile-Errors", async () => {
    const k = await createKey("pro");
    const body = { source: `% ${crypto.randomUUID()}\n\\documentclass{article}\\begin{document}A \\oops{} B\\end{document}`, output: "png", dpi: 10, haltOnError: false };
    const key = { "Idempotency-Key": crypto.randomUUID() };
    const first = await compileSync(k.key, body, key);
    expect(first.status).toBe(200);
    const bytes = await first.arrayBuffer();
    const replay = await compileSync(k.key, body, key);
    expect(replay.headers.get("Idempotent-Replayed")).toBe("true");
    expect(replay.headers.get("Content-Type")).toBe("image/png");
    expect(replay.headers.get("X-Output-Pages")).toBe("1-1");
    expect(replay.headers.get("X-Compile-Errors")).toBe("1");
    expect(new Uint8Array(await replay.arrayBuffer())).toEqual(new Uint8Array(bytes));
  });

  it("the output is part of the cache key: the PDF and a page image of one document are two entries", async () => {
    const k = await createKey("pro");
    const source = threePages();
    const pdf = await compileSync(k.key, { source });
    expect(isPdf(await pdf.arrayBuffer())).toBe(true);
    const png = await compileSync(k.key, { source, output: "png", dpi: 10 });
    expect(png.headers.get("X-Cache")).toBe("MISS");
    expect(png.headers.get("Content-Type")).toBe("application/zip");
    expect(png.headers.get("ETag")).not.toBe(pdf.headers.get("ETag"));
    expect(zipNames(await png.arrayBuffer())).toEqual(["page-1.png", "page-2.png", "page-3.png"]);
    // the default dpi spelled out is the same request
    const svg1 = await compileSync(k.key, { source, output: "svg", lastPage: 1 });
    const svg2 = await compileSync(k.key, { source, output: "svg", firstPage: 1, lastPage: 1 });
    expect(svg1.headers.get("Content-Type")).toBe("image/svg+xml");
    expect(svg2.headers.get("X-Cache")).toBe("HIT");
    expect(await svg2.text()).toMatch(/^<\?xml/);
    await svg1.arrayBuffer();
  });

  it("log and zip with synctex", async () => {
    const k = await createKey("pro");
    const log = await compileSync(k.key, { source: uniqueDoc("log"), output: "log" });
    expect(log.status).toBe(200);
    expect(log.headers.get("Content-Type")).toBe("text/plain; charset=utf-8");
    expect(await log.text()).toMatch(/^This is pdfTeX/);
    const zip = await compileSync(k.key, { source: uniqueDoc("zip"), mainPath: "paper/report.tex", output: "zip", synctex: true });
    expect(zip.headers.get("Content-Type")).toBe("application/zip");
    expect(zipNames(await zip.arrayBuffer())).toEqual(["report.pdf", "report.log", "report.synctex.gz"]);
  });

  it("haltOnError: false answers the PDF of a document with errors, X-Compile-Errors counting them", async () => {
    const k = await createKey("pro");
    const source = `% ${crypto.randomUUID()}\n\\documentclass{article}\\begin{document}Before \\undefinedcommand{} after.\\end{document}`;
    const halted = await compileSync(k.key, { source });
    expect(halted.status).toBe(422);
    expect((await errorOf(halted)).code).toBe("compile_error");
    const res = await compileSync(k.key, { source, haltOnError: false });
    expect(res.status).toBe(200);
    expect(res.headers.get("X-Compile-Errors")).toBe("1");
    expect(isPdf(await res.arrayBuffer())).toBe(true);
  });

  it.each([
    [{ output: "png", firstPage: 1, lastPage: 21 }, "lastPage"],
    [{ output: "png", dpi: 301 }, "dpi"],
    [{ dpi: 100 }, "dpi"],
    [{ output: "log", firstPage: 2 }, "firstPage"],
    [{ output: "pdf", synctex: true }, "synctex"],
    [{ output: "gif" }, "output"],
  ])("%j is a 400 naming %s, before any compile", async (extra, field) => {
    const k = await createKey("pro");
    const res = await compileSync(k.key, { source: uniqueDoc("bad"), ...extra });
    expect(res.status).toBe(400);
    const err = (await errorOf(res)) as { code: string; details?: { issues?: { path: string }[] } };
    expect(err.code).toBe("invalid_request");
    expect(JSON.stringify(err)).toContain(field);
  });

  it("a first page past the document's end is the compiler's 422 page_out_of_range", async () => {
    const k = await createKey("pro");
    const res = await compileSync(k.key, { source: threePages(), output: "png", firstPage: 7 });
    expect(res.status).toBe(422);
    const err = await errorOf(res);
    expect(err.code).toBe("page_out_of_range");
    expect(err.message).toContain("3 pages");
  });
});

describe("compile outputs: async jobs", () => {
  it("a png job's output downloads from outputUrl with its type; its pdfUrl is a 409 naming outputUrl", async () => {
    const k = await createKey("pro");
    const created = (await (await submit(k.key, { source: threePages(), output: "png", dpi: 20 })).json()) as JobBody & { outputUrl: string };
    expect(created.outputUrl).toBe(`/v1/compile/jobs/${created.id}/output`);
    const job = await waitForJob(k.key, created.id, 60_000);
    expect(job).toMatchObject({ status: "succeeded", pages: 3 });
    const out = await api(created.outputUrl, { key: k.key });
    expect(out.status).toBe(200);
    expect(out.headers.get("Content-Type")).toBe("application/zip");
    expect(out.headers.get("Content-Disposition")).toBe(`attachment; filename="${job.id}.zip"`);
    expect(out.headers.get("X-Output-Pages")).toBe("1-3");
    expectInert(out);
    const bytes = await out.arrayBuffer();
    expect(bytes.byteLength).toBe(job.sizeBytes);
    expect(zipNames(bytes)).toEqual(["page-1.png", "page-2.png", "page-3.png"]);
    const pdf = await api(job.pdfUrl, { key: k.key });
    expect(pdf.status).toBe(409);
    expect(await errorOf(pdf)).toMatchObject({ code: "not_a_pdf", outputUrl: created.outputUrl });
  });

  it("a default job's outputUrl is its PDF", async () => {
    const k = await createKey("pro");
    const created = (await (await submit(k.key, { source: uniqueDoc("async-pdf") })).json()) as JobBody & { outputUrl: string };
    await waitForJob(k.key, created.id, 60_000);
    const out = await api(created.outputUrl, { key: k.key });
    expect(out.headers.get("Content-Type")).toBe("application/pdf");
    expect(isPdf(await out.arrayBuffer())).toBe(true);
  });
});

describe("GET /v1/compile/environment", () => {
  it("describes the compiler's installation", async () => {
    const k = await createKey("pro");
    const res = await api("/v1/compile/environment", { key: k.key });
    expect(res.status).toBe(200);
    const env = (await res.json()) as { texlive: { version: string }; engines: { name: string; version: string }[]; packages: { name: string; kind: string; date?: string }[]; fonts: string[] };
    expect(env.texlive.version).toMatch(/^20\d\d$/);
    expect(env.engines.find((e) => e.name === "pdflatex")?.version).toContain("pdfTeX");
    expect(env.packages.length).toBeGreaterThan(1000);
    expect(env.packages.find((p) => p.name === "hyperref" && p.kind === "package")?.date).toMatch(/^\d{4}[/-]\d{2}[/-]\d{2}$/);
    expect(env.fonts.length).toBeGreaterThan(0);
    const anonymous = await api("/v1/compile/environment");
    expect(anonymous.status).toBe(401);
  });
});
