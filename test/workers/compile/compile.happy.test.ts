import { Webhook } from "standardwebhooks";
import { env } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { clearMemoryCache } from "../../../src/compile/cache.ts";
import { api, createKey } from "../helpers.ts";
import { compileSync, HELLO, isPdf, type JobBody, receivedAt, receiverUrl, submit, uniqueDoc, waitForJob } from "./helpers.ts";

/** A PDF holds what a user's LaTeX put there (PDF JavaScript included): never run on the API's origin. */
function expectInert(res: Response) {
  expect(res.headers.get("X-Content-Type-Options")).toBe("nosniff");
  expect(res.headers.get("Content-Security-Policy")).toBe("sandbox; default-src 'none'");
}

describe("compile: sync", () => {
  it.each(["pdflatex", "xelatex", "lualatex"] as const)("%s: hello world answers a PDF with sane headers", async (engine) => {
    const k = await createKey("pro");
    const res = await compileSync(k.key, { source: uniqueDoc(engine), engine });
    expect(res.status).toBe(200);
    expect(res.headers.get("Content-Type")).toBe("application/pdf");
    expectInert(res);
    const pdf = await res.arrayBuffer();
    expect(isPdf(pdf)).toBe(true);
    expect(Number(res.headers.get("Content-Length"))).toBe(pdf.byteLength);
    expect(res.headers.get("X-Engine")).toBe(engine);
    expect(res.headers.get("X-Cache")).toBe("MISS");
    const ms = Number(res.headers.get("X-Compile-Duration-Ms"));
    expect(ms).toBeGreaterThan(0);
    expect(ms).toBeLessThan(30_000);
    expect(res.headers.get("X-Compile-Pages")).toBe("1");
    expect(res.headers.get("ETag")).toMatch(/^"[0-9a-f]{64}"$/);
    expect(res.headers.get("X-Request-Id")).toBeTruthy();
    expect(res.headers.get("X-RateLimit-Limit")).toBe("1000");
  });

  it("defaults to pdflatex and counts pages", async () => {
    const k = await createKey("pro");
    const source = `% ${crypto.randomUUID()}\n\\documentclass{article}\\begin{document}One\\newpage Two\\newpage Three\\end{document}`;
    const res = await compileSync(k.key, { source });
    expect(res.status).toBe(200);
    expect(res.headers.get("X-Engine")).toBe("pdflatex");
    expect(res.headers.get("X-Compile-Pages")).toBe("3");
  });

  it("a MISS is stored in R2 with its expiry and served from there to an isolate without a copy", async () => {
    const k = await createKey("pro");
    const source = uniqueDoc("r2");
    const first = await compileSync(k.key, { source });
    expect(first.headers.get("X-Cache")).toBe("MISS");
    expect(first.headers.get("Server-Timing")).toMatch(/cache;dur=\d+, compile;dur=\d+, total;dur=\d+/);
    await first.arrayBuffer();
    const key = `cache/${first.headers.get("ETag")!.replaceAll('"', "")}.pdf`;
    // Written just after the response (CACHE_WRITE_DELAY_MS).
    await vi.waitFor(async () => expect(await env.FILES.head(key)).not.toBeNull(), { timeout: 2000, interval: 20 });
    const stored = await env.FILES.head(key);
    expect(Number(stored!.customMetadata!.expiresAt)).toBeGreaterThan(Date.now() + 6 * 24 * 3600 * 1000);

    clearMemoryCache();
    const again = await compileSync(k.key, { source });
    expect(again.headers.get("X-Cache")).toBe("HIT");
    expect(again.headers.get("X-Compile-Pages")).toBe("1");
    expect(isPdf(await again.arrayBuffer())).toBe(true);
  });

  it("a repeat is a cache HIT with the same bytes; one changed byte is a MISS", async () => {
    const k = await createKey("pro");
    const source = uniqueDoc("cache");
    const first = await compileSync(k.key, { source });
    expect(first.headers.get("X-Cache")).toBe("MISS");
    const firstBytes = new Uint8Array(await first.arrayBuffer());

    const again = await compileSync(k.key, { source, engine: "pdflatex", timeoutMs: 20_000 });
    expect(again.status).toBe(200);
    expect(again.headers.get("X-Cache")).toBe("HIT");
    expect(again.headers.get("X-Compile-Duration-Ms")).toBe("0");
    expect(again.headers.get("X-Engine")).toBe("pdflatex");
    expect(again.headers.get("X-Compile-Pages")).toBe("1");
    expect(again.headers.get("ETag")).toBe(first.headers.get("ETag"));
    const againBytes = new Uint8Array(await again.arrayBuffer());
    expect(Number(again.headers.get("Content-Length"))).toBe(againBytes.byteLength);
    expect(againBytes).toEqual(firstBytes);

    const changed = await compileSync(k.key, { source: source.replace("Hello", "Hellp") });
    expect(changed.status).toBe(200);
    expect(changed.headers.get("X-Cache")).toBe("MISS");
    expect(changed.headers.get("ETag")).not.toBe(first.headers.get("ETag"));
    await changed.arrayBuffer();

    const otherEngine = await compileSync(k.key, { source, engine: "lualatex" });
    expect(otherEngine.headers.get("X-Cache")).toBe("MISS");
    await otherEngine.arrayBuffer();
  });

  it("compiles with extra files (utf8 and base64, in subdirectories); file order does not change the cache key", async () => {
    const k = await createKey("pro");
    const tag = crypto.randomUUID();
    const source = `\\documentclass{article}\\begin{document}\\input{chapters/one}\\input{two}\\end{document}`;
    const files = [
      { path: "chapters/one.tex", content: `Chapter one ${tag}.` },
      { path: "two.tex", content: btoa("Chapter two."), encoding: "base64" },
    ];
    const res = await compileSync(k.key, { source, files });
    expect(res.status).toBe(200);
    expect(isPdf(await res.arrayBuffer())).toBe(true);
    const reordered = await compileSync(k.key, { source, files: [files[1], files[0]] });
    expect(reordered.headers.get("X-Cache")).toBe("HIT");
    await reordered.arrayBuffer();
  });

  it("mainPath: a main file in a subfolder finds files from its folder and from the project root; mainPath and draft are in the cache key", async () => {
    const k = await createKey("pro");
    const tag = crypto.randomUUID();
    // a 2x2 PNG at the project root, an \input from the main file's folder
    const png = "iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAEElEQVR4nGP4z8AARAwQCgAf7gP9i18U1AAAAABJRU5ErkJggg==";
    const body = {
      mainPath: "thesis/thesis.tex",
      source: `\\documentclass{article}\\usepackage{graphicx}\\begin{document}\\input{chapters/one} ${tag} \\includegraphics[width=1cm]{figs/dot.png}\\end{document}`,
      files: [
        { path: "thesis/chapters/one.tex", content: "Chapter one." },
        { path: "figs/dot.png", content: png, encoding: "base64" },
      ],
    };
    const res = await compileSync(k.key, body);
    expect(res.status).toBe(200);
    const pdf = new TextDecoder("latin1").decode(await res.arrayBuffer());
    expect(pdf).toContain("/Subtype /Image");
    // the same request with the default spelled out is the same cache entry; draft is another
    const again = await compileSync(k.key, { ...body, draft: false });
    expect(again.headers.get("X-Cache")).toBe("HIT");
    await again.arrayBuffer();
    const draft = await compileSync(k.key, { ...body, draft: true });
    expect(draft.status).toBe(200);
    expect(draft.headers.get("X-Cache")).toBe("MISS");
    // images as boxes: the image is never read into the PDF
    expect(new TextDecoder("latin1").decode(await draft.arrayBuffer())).not.toContain("/Subtype /Image");
    // from another folder, chapters/one.tex is found neither next to the main file nor at the root
    const moved = await compileSync(k.key, { ...body, mainPath: "other/thesis.tex" });
    expect(moved.status).toBe(422);
    expect(((await moved.json()) as { error: { message: string } }).error.message).toContain("chapters/one");
  });

  it("shellEscape: a minted document compiles with it (pygmentize in the sandbox), and is a 422 saying so without it", async () => {
    const k = await createKey("pro");
    const source = `\\documentclass{article}\\usepackage{minted}\\begin{document}\\begin{minted}{c}\nint main(void) { return ${Math.floor(Math.random() * 1e6)}; }\n\\end{minted}\n\\end{document}\n`;
    const on = await compileSync(k.key, { source, shellEscape: true });
    expect(on.status).toBe(200);
    expect(isPdf(await on.arrayBuffer())).toBe(true);
    const off = await compileSync(k.key, { source });
    expect(off.status).toBe(422);
    expect(((await off.json()) as { error: { message: string } }).error.message).toContain('"shellEscape": true');
  });

  it("the account's next compile with the same preamble starts from it (X-Compile-Preamble), another account's does not", { timeout: 120_000 }, async () => {
    const a = await createKey("pro");
    const b = await createKey("pro");
    const preamble = `\\documentclass{article}\n\\usepackage{amsmath}\n% ${crypto.randomUUID()}\n`;
    const doc = (body: string) => `${preamble}\\begin{document}\n${body}\n\\end{document}\n`;
    const first = await compileSync(a.key, { source: doc("First.") });
    expect(first.headers.get("X-Compile-Preamble")).toBe("miss");
    await first.arrayBuffer();
    // the format is made in the background after the first compile
    let second: Response | undefined;
    const until = Date.now() + 90_000; // other test files keep the compiler busy meanwhile
    for (let i = 0; Date.now() < until; i++) {
      second = await compileSync(a.key, { source: doc(`Second ${i}.`) });
      await second.arrayBuffer();
      if (second.headers.get("X-Compile-Preamble") === "hit") break;
      await new Promise((r) => setTimeout(r, 500));
    }
    expect(second?.status).toBe(200);
    expect(second?.headers.get("X-Compile-Preamble")).toBe("hit");
    const other = await compileSync(b.key, { source: doc("Other account.") });
    expect(other.headers.get("X-Compile-Preamble")).toBe("miss");
    await other.arrayBuffer();
  });

  it("Idempotency-Key replays the first PDF", async () => {
    const k = await createKey("pro");
    const body = { source: uniqueDoc("idem") };
    const first = await compileSync(k.key, body, { "Idempotency-Key": "sync-1" });
    const firstBytes = new Uint8Array(await first.arrayBuffer());
    const second = await compileSync(k.key, body, { "Idempotency-Key": "sync-1" });
    expect(second.status).toBe(200);
    expect(second.headers.get("Idempotent-Replayed")).toBe("true");
    expect(second.headers.get("X-Cache")).toBe("MISS");
    expect(second.headers.get("Content-Type")).toBe("application/pdf");
    expectInert(second);
    expect(new Uint8Array(await second.arrayBuffer())).toEqual(firstBytes);
  });
});

describe("compile: async jobs", () => {
  it("submit answers 202 with Location; the job succeeds and its PDF downloads", async () => {
    const k = await createKey("pro");
    const res = await submit(k.key, { source: uniqueDoc("async"), engine: "xelatex" });
    expect(res.status).toBe(202);
    const created = (await res.json()) as JobBody;
    expect(created).toMatchObject({ status: "queued", engine: "xelatex", statusUrl: `/v1/compile/jobs/${created.id}`, pdfUrl: `/v1/compile/jobs/${created.id}/pdf` });
    expect(created.id).toMatch(/^job_/);
    expect(res.headers.get("Location")).toBe(created.statusUrl);
    expect(created.callbackSecret).toBeUndefined();

    const job = await waitForJob(k.key, created.id);
    expect(job).toMatchObject({ status: "succeeded", attempts: 1, pages: 1, engine: "xelatex" });
    expect(job.durationMs).toBeGreaterThan(0);
    expect(job.error).toBeUndefined();

    const pdf = await api(job.pdfUrl, { key: k.key });
    expect(pdf.status).toBe(200);
    expect(pdf.headers.get("Content-Type")).toBe("application/pdf");
    expect(pdf.headers.get("Content-Disposition")).toBe(`attachment; filename="${job.id}.pdf"`);
    expectInert(pdf);
    const bytes = await pdf.arrayBuffer();
    expect(isPdf(bytes)).toBe(true);
    expect(bytes.byteLength).toBe(job.sizeBytes);
  });

  it("a job for a document already in the account's cache succeeds without compiling", async () => {
    const k = await createKey("pro");
    const source = uniqueDoc("warm");
    await (await compileSync(k.key, { source })).arrayBuffer();
    const created = (await (await submit(k.key, { source })).json()) as JobBody;
    const job = await waitForJob(k.key, created.id);
    expect(job).toMatchObject({ status: "succeeded", durationMs: 0, pages: 1 });
  });

  it("lists the account's jobs newest first with cursor pagination and a status filter", async () => {
    const k = await createKey("pro");
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push(((await (await submit(k.key, { source: `${HELLO}% ${i} ${crypto.randomUUID()}` })).json()) as JobBody).id);
    const page1 = (await (await api("/v1/compile/jobs?limit=2", { key: k.key })).json()) as { data: JobBody[]; nextCursor: string };
    expect(page1.data.map((j) => j.id)).toEqual([ids[2], ids[1]]);
    const page2 = (await (await api(`/v1/compile/jobs?limit=2&cursor=${page1.nextCursor}`, { key: k.key })).json()) as { data: JobBody[]; nextCursor: string | null };
    expect(page2.data.map((j) => j.id)).toEqual([ids[0]]);
    expect(page2.nextCursor).toBeNull();
    for (const id of ids) await waitForJob(k.key, id);
    const succeeded = (await (await api("/v1/compile/jobs?status=succeeded", { key: k.key })).json()) as { data: JobBody[] };
    expect(succeeded.data).toHaveLength(3);
    const failed = (await (await api("/v1/compile/jobs?status=failed", { key: k.key })).json()) as { data: JobBody[] };
    expect(failed.data).toHaveLength(0);
  });

  it("POSTs the final record to callbackUrl, signed with the secret returned once", async () => {
    const k = await createKey("pro");
    const path = `/cb/${crypto.randomUUID()}`;
    const res = await submit(k.key, { source: uniqueDoc("callback"), callbackUrl: `${receiverUrl()}${path}` });
    const created = (await res.json()) as JobBody;
    expect(created.callbackSecret).toMatch(/^whsec_/);
    const job = await waitForJob(k.key, created.id, 20_000, (j) => j.callbackStatus === "delivered");
    expect(job.callbackStatus).toBe("delivered");
    const got = await receivedAt(path);
    expect(got).toHaveLength(1);
    const payload = new Webhook(created.callbackSecret!).verify(got[0]!.body, got[0]!.headers) as { type: string; data: JobBody };
    expect(payload.type).toBe("compile.job.succeeded");
    expect(payload.data).toMatchObject({ id: created.id, status: "succeeded", pages: 1 });
    expect(got[0]!.headers["webhook-id"]).toBe(`cb_${created.id}`);
    // The secret is not in the job record afterwards.
    expect(JSON.stringify(job)).not.toContain(created.callbackSecret!);
  });

  it("retries a failing callback on the schedule, with the same webhook-id", async () => {
    const k = await createKey("pro");
    const path = `/cb/${crypto.randomUUID()}`;
    const created = (await (await submit(k.key, { source: uniqueDoc("cb-fail"), callbackUrl: `${receiverUrl()}${path}?status=500` })).json()) as JobBody;
    // WEBHOOK_RETRY_SCHEDULE is "1,1,1" in tests: 1 try + 3 retries, then failed.
    const job = await waitForJob(k.key, created.id, 25_000, (j) => j.callbackStatus === "failed");
    expect(job.callbackStatus).toBe("failed");
    const got = await receivedAt(path);
    expect(got).toHaveLength(4);
    expect(new Set(got.map((g) => g.headers["webhook-id"]))).toEqual(new Set([`cb_${created.id}`]));
  });

  it("Idempotency-Key on submit returns the same job, not a second one", async () => {
    const k = await createKey("pro");
    const body = { source: uniqueDoc("idem-async") };
    const a = (await (await submit(k.key, body, { "Idempotency-Key": "job-1" })).json()) as JobBody;
    const replay = await submit(k.key, body, { "Idempotency-Key": "job-1" });
    expect(replay.status).toBe(202);
    expect(replay.headers.get("Location")).toBe(a.statusUrl);
    expect(((await replay.json()) as JobBody).id).toBe(a.id);
    const list = (await (await api("/v1/compile/jobs", { key: k.key })).json()) as { data: JobBody[] };
    expect(list.data).toHaveLength(1);
  });
});

describe("compile: documentation", () => {
  it("every compile route is in /openapi.json with its limits and error responses", async () => {
    const doc = (await (await api("/openapi.json")).json()) as { paths: Record<string, Record<string, { description?: string; responses: Record<string, unknown> }>> };
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(["/v1/compile/sync", "/v1/compile/async", "/v1/compile/jobs", "/v1/compile/jobs/{id}", "/v1/compile/jobs/{id}/pdf"]));
    const sync = doc.paths["/v1/compile/sync"]!.post!;
    expect(Object.keys(sync.responses)).toEqual(expect.arrayContaining(["200", "400", "401", "413", "422", "503"]));
    expect(sync.description).toContain("10 MiB");
    expect(Object.keys(doc.paths["/v1/compile/async"]!.post!.responses)).toContain("202");
  });

  it("a wrong method is 405 with Allow", async () => {
    const k = await createKey("pro");
    const res = await api("/v1/compile/sync", { key: k.key });
    expect(res.status).toBe(405);
    expect(res.headers.get("Allow")).toContain("POST");
  });
});
