import { execFile } from "node:child_process";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { baseUrl, call, newKey } from "./client.ts";
import { ROOT } from "./harness.ts";

const HELLO = "\\documentclass{article}\\begin{document}Hello, world!\\end{document}";
const unique = (label: string) => `% ${label} ${crypto.randomUUID()}\n${HELLO}`;
const isPdf = (b: Uint8Array) => new TextDecoder().decode(b.slice(0, 5)) === "%PDF-";

type Job = { id: string; status: string; statusUrl: string; pdfUrl: string; pages: number | null; error?: { code: string; line?: number } };

async function waitForJob(key: string, id: string): Promise<Job> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const job = (await (await call(`/v1/compile/jobs/${id}`, { key })).json()) as Job;
    if (job.status === "succeeded" || job.status === "failed" || Date.now() > deadline) return job;
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe("compile API end to end (npm run dev)", () => {
  let key: string;
  beforeAll(async () => {
    key = await newKey("pro");
  });

  it("sync: hello world, then a cache HIT, then a MISS after a one-byte change", async () => {
    const source = unique("e2e");
    const res = await call("/v1/compile/sync", { method: "POST", key, json: { source } });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/pdf");
    expect(res.headers.get("x-cache")).toBe("MISS");
    expect(res.headers.get("x-engine")).toBe("pdflatex");
    expect(Number(res.headers.get("x-compile-duration-ms"))).toBeGreaterThan(0);
    const pdf = new Uint8Array(await res.arrayBuffer());
    expect(isPdf(pdf)).toBe(true);
    expect(Number(res.headers.get("content-length"))).toBe(pdf.byteLength);

    const hit = await call("/v1/compile/sync", { method: "POST", key, json: { source } });
    expect(hit.headers.get("x-cache")).toBe("HIT");
    expect(hit.headers.get("x-compile-duration-ms")).toBe("0");
    expect(new Uint8Array(await hit.arrayBuffer())).toEqual(pdf);

    const miss = await call("/v1/compile/sync", { method: "POST", key, json: { source: source + "%" } });
    expect(miss.headers.get("x-cache")).toBe("MISS");
    await miss.arrayBuffer();
  });

  it("sync: a LaTeX error is a 422 with the line", async () => {
    const res = await call("/v1/compile/sync", { method: "POST", key, json: { source: "\\documentclass{article}\n\\begin{document}\n\\oops\n\\end{document}\n" } });
    expect(res.status).toBe(422);
    const body = (await res.json()) as { error: { code: string; line: number; errors: unknown[]; log: string } };
    expect(body.error).toMatchObject({ code: "compile_error", line: 3 });
    expect(body.error.errors.length).toBeGreaterThan(0);
  });

  it("401 without a key, 413 over a limit, 400 for a bad engine", async () => {
    expect((await call("/v1/compile/sync", { method: "POST", json: { source: HELLO } })).status).toBe(401);
    expect((await call("/v1/compile/sync", { method: "POST", key, json: { source: HELLO + "%".repeat(2 * 1024 * 1024) } })).status).toBe(413);
    expect((await call("/v1/compile/sync", { method: "POST", key, json: { source: HELLO, engine: "tex" } })).status).toBe(400);
  });

  it("async: submit, poll until succeeded, download; a broken document fails; other accounts get 404", async () => {
    const res = await call("/v1/compile/async", { method: "POST", key, json: { source: unique("e2e-async"), engine: "lualatex" } });
    expect(res.status).toBe(202);
    const created = (await res.json()) as Job;
    expect(res.headers.get("location")).toBe(created.statusUrl);
    const job = await waitForJob(key, created.id);
    expect(job).toMatchObject({ status: "succeeded", pages: 1 });
    const pdf = await call(job.pdfUrl, { key });
    expect(pdf.status).toBe(200);
    expect(pdf.headers.get("content-disposition")).toContain(`${job.id}.pdf`);
    expect(isPdf(new Uint8Array(await pdf.arrayBuffer()))).toBe(true);

    const other = await newKey("free");
    expect((await call(`/v1/compile/jobs/${job.id}`, { key: other })).status).toBe(404);
    expect((await call(job.pdfUrl, { key: other })).status).toBe(404);

    const broken = (await (await call("/v1/compile/async", { method: "POST", key, json: { source: `% ${crypto.randomUUID()}\n\\documentclass{article}\n\\begin{document}\\oops\\end{document}` } })).json()) as Job;
    const failed = await waitForJob(key, broken.id);
    expect(failed.status).toBe("failed");
    expect(failed.error).toMatchObject({ code: "compile_error", line: 3 });
    expect((await call(failed.pdfUrl, { key })).status).toBe(409);
  });

  it("async with callbackUrl: the final record arrives signed with the job's callbackSecret", async () => {
    const received: Array<{ headers: Record<string, string>; body: string }> = [];
    const server = http.createServer((req, res) => {
      let body = "";
      req.on("data", (d) => (body += d));
      req.on("end", () => {
        received.push({ headers: req.headers as Record<string, string>, body });
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
    try {
      const { port } = server.address() as AddressInfo;
      const res = await call("/v1/compile/async", { method: "POST", key, json: { source: unique("e2e-cb"), callbackUrl: `http://127.0.0.1:${port}/hook` } });
      const created = (await res.json()) as Job & { callbackSecret: string };
      expect(created.callbackSecret).toMatch(/^whsec_/);
      const deadline = Date.now() + 30_000;
      while (received.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      expect(received).toHaveLength(1);
      const event = new Webhook(created.callbackSecret).verify(received[0]!.body, received[0]!.headers) as { type: string; data: Job };
      expect(event.type).toBe("compile.job.succeeded");
      expect(event.data).toMatchObject({ id: created.id, status: "succeeded" });
    } finally {
      server.close();
    }
  });

  describe("the README's curl examples, verbatim", () => {
    let dir: string;
    beforeAll(() => {
      dir = mkdtempSync(join(tmpdir(), "compile-readme-"));
    });
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    it("run as written and produce PDFs", async () => {
      const readme = readFileSync(join(ROOT, "README.md"), "utf8");
      const section = readme.slice(readme.indexOf("<!-- section: compile -->"), readme.indexOf("\n## ", readme.indexOf("<!-- section: compile -->")));
      const blocks = [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);
      expect(blocks.length).toBeGreaterThan(0);
      const script = `set -e\n${blocks.join("\n")}`.replaceAll("http://127.0.0.1:8787", baseUrl());
      const out = await new Promise<string>((resolve, reject) =>
        execFile("bash", ["-c", script], { cwd: dir, env: { ...process.env, KEY: key }, timeout: 60_000 }, (err, stdout, stderr) => (err ? reject(new Error(`${err.message}\n${stderr}\n${stdout}`)) : resolve(stdout))),
      );
      expect(out).toMatch(/HTTP\/1\.1 200/);
      expect(out).toMatch(/x-cache: (HIT|MISS)/i);
      expect(out).toContain('"code":"compile_error"');
      // a file that is not a PDF holds the API's error: it says why
      for (const f of ["hello.pdf", "book.pdf", "listing.pdf", "job.pdf", "despite.pdf", "signed.pdf"]) expect(isPdf(readFileSync(join(dir, f))), `${f}: ${readFileSync(join(dir, f)).subarray(0, 600).toString()}`).toBe(true);
      // the outputs' examples: a PNG, two zips (local file header "PK\3\4"), the environment
      expect(readFileSync(join(dir, "page-2.png")).subarray(1, 4).toString()).toBe("PNG");
      for (const f of ["pages.zip", "outputs.zip"]) expect(readFileSync(join(dir, f)).readUInt32LE(0), f).toBe(0x04034b50);
      expect(out).toMatch(/x-compile-errors: 1/i);
      expect(out).toMatch(/"positions":\[\{"page":1,/);
      expect(out).toMatch(/"positions":\[\{"file":"main.tex","line":3,/);
      expect(JSON.parse(readFileSync(join(dir, "environment.json"), "utf8")).texlive.version).toMatch(/^20\d\d$/);
      // the asset's upload answered its metadata
      expect(out).toMatch(/"sha256":"[0-9a-f]{64}","sizeBytes":37,/);
    });
  });
});
