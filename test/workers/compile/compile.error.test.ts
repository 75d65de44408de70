import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { COMPILE_LIMITS } from "../../../src/compile/limits.ts";
import { api, apiWith, createKey, errorOf } from "../helpers.ts";
import { compileSync, HELLO, insertJob, type JobBody, receiverUrl, submit, uniqueDoc, waitForJob } from "./helpers.ts";

const BROKEN_LINE_4 = "\\documentclass{article}\n\\begin{document}\nHello\n\\undefinedcommandxyz\n\\end{document}\n";

/** A compile request to the app with some bindings replaced. */
const callWith = (overrides: Partial<Env>, path: string, key: string, json: unknown) => apiWith(overrides, path, { method: "POST", key, json, ip: "203.0.113.9" });

describe("compile: LaTeX failures", () => {
  it("422 compile_error with the line, all errors and the log tail", async () => {
    const k = await createKey("pro");
    const res = await compileSync(k.key, { source: `% ${crypto.randomUUID()}\n${BROKEN_LINE_4}` });
    expect(res.status).toBe(422);
    expect(res.headers.get("Content-Type")).toMatch(/^application\/json/);
    const err = await errorOf(res);
    expect(err.code).toBe("compile_error");
    expect(err.message).toMatch(/Undefined control sequence/);
    expect(err.line).toBe(5); // the comment line shifts it by one
    expect(Array.isArray(err.errors) && (err.errors as unknown[]).length).toBeGreaterThan(0);
    expect(typeof err.log).toBe("string");
    expect(err.log as string).toContain("undefinedcommandxyz");
  });

  it("failed compiles are not cached", async () => {
    const k = await createKey("pro");
    const source = `% ${crypto.randomUUID()}\n${BROKEN_LINE_4}`;
    expect((await compileSync(k.key, { source })).status).toBe(422);
    const again = await compileSync(k.key, { source });
    expect(again.status).toBe(422);
    expect(again.headers.get("X-Cache")).toBeNull();
  });

  it("422 compile_timeout when timeoutMs runs out", async () => {
    const k = await createKey("pro");
    const res = await compileSync(k.key, { source: `% ${crypto.randomUUID()}\n\\documentclass{article}\\begin{document}\\loop\\iftrue\\repeat\\end{document}`, timeoutMs: 1000 });
    expect(res.status).toBe(422);
    expect((await errorOf(res)).code).toBe("compile_timeout");
  });

  it("an async job for a broken document ends failed with the error; its PDF is 409", async () => {
    const k = await createKey("pro");
    const created = (await (await submit(k.key, { source: `% ${crypto.randomUUID()}\n${BROKEN_LINE_4}` })).json()) as JobBody;
    const job = await waitForJob(k.key, created.id);
    expect(job.status).toBe("failed");
    expect(job.attempts).toBe(1);
    expect(job.error).toMatchObject({ code: "compile_error", line: 5 });
    expect(job.sizeBytes).toBeNull();
    const pdf = await api(job.pdfUrl, { key: k.key });
    expect(pdf.status).toBe(409);
    expect((await errorOf(pdf)).code).toBe("job_failed");
  });

  it("the PDF of a job not finished yet is 404 pdf_not_ready", async () => {
    const k = await createKey("pro");
    const id = await insertJob(env, k.accountId, HELLO);
    const res = await api(`/v1/compile/jobs/${id}/pdf`, { key: k.key });
    expect(res.status).toBe(404);
    expect((await errorOf(res)).code).toBe("pdf_not_ready");
  });
});

describe("compile: bad requests", () => {
  const cases: Array<[string, unknown, string]> = [
    ["missing source", { engine: "pdflatex" }, "source"],
    ["empty source", { source: "" }, "source"],
    ["unknown engine", { source: HELLO, engine: "tex" }, "engine"],
    ["unknown field", { source: HELLO, format: "dvi" }, ""],
    ["timeoutMs too small", { source: HELLO, timeoutMs: 10 }, "timeoutMs"],
    ["timeoutMs too large", { source: HELLO, timeoutMs: COMPILE_LIMITS.maxTimeoutMs + 1 }, "timeoutMs"],
    ["timeoutMs not an integer", { source: HELLO, timeoutMs: "fast" }, "timeoutMs"],
    ["path traversal", { source: HELLO, files: [{ path: "../etc/passwd", content: "x" }] }, "files.0.path"],
    ["absolute path", { source: HELLO, files: [{ path: "/etc/passwd", content: "x" }] }, "files.0.path"],
    ["a folder of the compile server's", { source: HELLO, files: [{ path: ".texmf-var/x.lua", content: "x" }] }, "files.0.path"],
    ["control character", { source: HELLO, files: [{ path: "a\u0001b.tex", content: "x" }] }, "files.0.path"],
    ["backslash", { source: HELLO, files: [{ path: "a\\b.tex", content: "x" }] }, "files.0.path"],
    ["main.tex is the main file", { source: HELLO, files: [{ path: "main.tex", content: "x" }] }, "files.0.path"],
    ["a file at mainPath", { source: HELLO, mainPath: "thesis/thesis.tex", files: [{ path: "Thesis/thesis.tex", content: "x" }] }, "files.0.path"],
    ["a file where mainPath needs a folder", { source: HELLO, mainPath: "thesis/thesis.tex", files: [{ path: "thesis", content: "x" }] }, "files"],
    ["mainPath traversal", { source: HELLO, mainPath: "../main.tex" }, "mainPath"],
    ["mainPath absolute", { source: HELLO, mainPath: "/main.tex" }, "mainPath"],
    ["mainPath without an extension", { source: HELLO, mainPath: "thesis/main" }, "mainPath"],
    ["mainPath named like TeX's output", { source: HELLO, mainPath: "thesis/main.pdf" }, "mainPath"],
    ["mainPath with a TeX special character", { source: HELLO, mainPath: "thesis/a{b}.tex" }, "mainPath"],
    ["mainPath too long", { source: HELLO, mainPath: `${"a".repeat(COMPILE_LIMITS.maxPathLength)}.tex` }, "mainPath"],
    ["draft not a boolean", { source: HELLO, draft: "yes" }, "draft"],
    ["shellEscape not a boolean", { source: HELLO, shellEscape: "yes" }, "shellEscape"],
    ["duplicate paths", { source: HELLO, files: [{ path: "a.tex", content: "x" }, { path: "A.tex", content: "y" }] }, "files.1.path"],
    ["bad base64", { source: HELLO, files: [{ path: "a.png", content: "not base64!", encoding: "base64" }] }, "files.0.content"],
    ["unknown encoding", { source: HELLO, files: [{ path: "a.tex", content: "x", encoding: "hex" }] }, "files.0.encoding"],
    ["unknown file field", { source: HELLO, files: [{ path: "a.tex", content: "x", mode: 755 }] }, "files.0"],
  ];
  it.each(cases)("400 invalid_request: %s", async (_name, body, path) => {
    const k = await createKey("pro");
    for (const route of ["/v1/compile/sync", "/v1/compile/async"]) {
      const res = await api(route, { method: "POST", key: k.key, json: body });
      expect(res.status).toBe(400);
      const err = (await errorOf(res)) as unknown as { code: string; details: { issues: Array<{ path: string }> } };
      expect(err.code).toBe("invalid_request");
      expect(err.details.issues.map((i) => i.path)).toContain(path);
    }
  });

  it("400 for malformed JSON, 415 for a non-JSON body", async () => {
    const k = await createKey("pro");
    const bad = await api("/v1/compile/sync", { method: "POST", key: k.key, body: "{not json", headers: { "Content-Type": "application/json" } });
    expect(bad.status).toBe(400);
    const text = await api("/v1/compile/sync", { method: "POST", key: k.key, body: HELLO, headers: { "Content-Type": "text/plain" } });
    expect(text.status).toBe(415);
  });

  it("400 for a callbackUrl that is not a public https URL", async () => {
    const k = await createKey("pro");
    for (const callbackUrl of ["ftp://example.com/x", "not a url", "https://10.0.0.1/hook", "https://169.254.169.254/latest"]) {
      const res = await submit(k.key, { source: HELLO, callbackUrl });
      expect(res.status, callbackUrl).toBe(400);
      expect(((await errorOf(res)) as unknown as { details: { issues: Array<{ path: string }> } }).details.issues[0]!.path).toBe("callbackUrl");
    }
  });

  it("401 without or with a bad key", async () => {
    expect((await api("/v1/compile/sync", { method: "POST", json: { source: HELLO } })).status).toBe(401);
    const res = await api("/v1/compile/async", { method: "POST", key: "tmk_nope", json: { source: HELLO } });
    expect(res.status).toBe(401);
    expect((await errorOf(res)).code).toBe("unauthorized");
    expect((await api("/v1/compile/jobs", { key: "tmk_nope" })).status).toBe(401);
  });

  it("404 for a job that does not exist", async () => {
    const k = await createKey("pro");
    expect((await api("/v1/compile/jobs/job_nope", { key: k.key })).status).toBe(404);
    expect((await api("/v1/compile/jobs/job_nope/pdf", { key: k.key })).status).toBe(404);
  });

  it("400 for a bad cursor or status filter", async () => {
    const k = await createKey("pro");
    expect((await api("/v1/compile/jobs?cursor=%%%", { key: k.key })).status).toBe(400);
    expect((await api("/v1/compile/jobs?status=done", { key: k.key })).status).toBe(400);
  });
});

describe("compile: limits (413)", () => {
  const limitOf = async (res: Response) => ((await errorOf(res)) as { limit?: string }).limit;

  it("source over its limit", async () => {
    const k = await createKey("pro");
    const source = HELLO + "%".repeat(COMPILE_LIMITS.maxSourceBytes);
    const res = await compileSync(k.key, { source });
    expect(res.status).toBe(413);
    expect(await limitOf(res)).toBe("source");
  });

  it("too many files", async () => {
    const k = await createKey("pro");
    const files = Array.from({ length: COMPILE_LIMITS.maxFiles + 1 }, (_, i) => ({ path: `f${i}.tex`, content: "x" }));
    const res = await submit(k.key, { source: HELLO, files });
    expect(res.status).toBe(413);
    expect(await limitOf(res)).toBe("files");
  });

  it("source and files together over the decoded total", async () => {
    const k = await createKey("pro");
    const mib = "x".repeat(1024 * 1024);
    const files = Array.from({ length: 7 }, (_, i) => ({ path: `f${i}.tex`, content: mib }));
    const res = await compileSync(k.key, { source: HELLO, files });
    expect(res.status).toBe(413);
    expect(await limitOf(res)).toBe("totalBytes");
  });

  it("a body over 10 MiB", async () => {
    const k = await createKey("pro");
    const res = await compileSync(k.key, { source: HELLO, files: [{ path: "big.tex", content: "x".repeat(10 * 1024 * 1024 + 10) }] });
    expect(res.status).toBe(413);
    expect((await errorOf(res)).code).toBe("payload_too_large");
  });
});

describe("compile: compiler unavailable (503)", () => {
  it("503 with Retry-After when the compiler does not answer", async () => {
    const k = await createKey("pro");
    const res = await callWith({ COMPILER_URL: "http://127.0.0.1:9" }, "/v1/compile/sync", k.key, { source: uniqueDoc("down") });
    expect(res.status).toBe(503);
    expect(Number(res.headers.get("Retry-After"))).toBeGreaterThan(0);
    expect((await errorOf(res)).code).toBe("service_unavailable");
  });

  it("the server's 503 compiler_busy keeps its Retry-After", async () => {
    const k = await createKey("pro");
    const res = await callWith({ COMPILER_URL: `${receiverUrl()}/busy` }, "/v1/compile/sync", k.key, { source: uniqueDoc("busy") });
    expect(res.status).toBe(503);
    expect(res.headers.get("Retry-After")).toBe("7");
    expect((await errorOf(res)).code).toBe("compiler_busy");
  });

  it("a proxy's plain-text 5xx is a 503, never passed through", async () => {
    const k = await createKey("pro");
    const res = await callWith({ COMPILER_URL: `${receiverUrl()}/broken` }, "/v1/compile/sync", k.key, { source: uniqueDoc("broken") });
    expect(res.status).toBe(503);
    expect(res.headers.get("Retry-After")).toBeTruthy();
  });
});
