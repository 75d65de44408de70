// HTTP surface: health, 400/404/405/413/415, error body shape.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningServer } from "../src/server.ts";
import { compile, doc, expectPdf, testServer } from "./helpers.ts";

let s: RunningServer;
beforeAll(async () => {
  s = await testServer({ limits: { maxRequestBytes: 64 * 1024 } as never, poolSize: { pdflatex: 1, xelatex: 1, lualatex: 1 } as never });
});
afterAll(() => s?.close());

describe("http", () => {
  it("GET /healthz reports warm pools", async () => {
    const r = await fetch(`${s.url}/healthz`);
    expect(r.status).toBe(200);
    const b = await r.json();
    expect(b.ok).toBe(true);
    expect(Object.keys(b.pools).sort()).toEqual(["lualatex", "pdflatex", "xelatex"]);
    expect(b.pools.pdflatex.ready).toBeGreaterThanOrEqual(1);
    expect(b.pools.pdflatex.cold).toBe(0); // no take has found the pool empty yet
  });
  it("400 invalid_request with details.issues", async () => {
    const r = await compile(s.url, { engine: "latex", source: "x", files: [{ path: "/abs", content: "" }] });
    expect(r.status).toBe(400);
    expect(r.json.error.code).toBe("invalid_request");
    expect(r.json.error.details.issues.map((i: { path: string }) => i.path)).toEqual(["engine", "files[0].path"]);
  });
  it("400 on malformed JSON, 415 on wrong content type", async () => {
    expect((await compile(s.url, "{nope")).status).toBe(400);
    const r = await fetch(`${s.url}/compile`, { method: "POST", headers: { "content-type": "text/plain" }, body: "x" });
    expect(r.status).toBe(415);
    expect((await r.json()).error.code).toBe("unsupported_media_type");
  });
  it("413 payload_too_large", async () => {
    const r = await compile(s.url, { engine: "pdflatex", source: "x".repeat(100 * 1024) });
    expect(r.status).toBe(413);
    expect(r.json.error.code).toBe("payload_too_large");
  });
  it("404 and 405", async () => {
    expect((await fetch(`${s.url}/nope`)).status).toBe(404);
    const r = await fetch(`${s.url}/compile`);
    expect(r.status).toBe(405);
    expect(r.headers.get("x-request-id")).toBeTruthy();
  });
  it("a caller that hangs up has its job killed at once, not left to run to its time limit", async () => {
    const jobs = async () => ((await (await fetch(`${s.url}/healthz`)).json()) as { jobs: { active: number } }).jobs.active;
    // busy for far longer than the test waits
    const spin = doc("\\count255=0 \\loop\\advance\\count255 by 1 \\ifnum\\count255<400000000 \\repeat done");
    const ac = new AbortController();
    const call = fetch(`${s.url}/compile`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ engine: "pdflatex", source: spin, timeoutMs: 25_000 }), signal: ac.signal });
    call.catch(() => {});
    await expect.poll(jobs, { interval: 20, timeout: 5_000 }).toBe(1);
    ac.abort();
    await expect.poll(jobs, { interval: 20, timeout: 2_000 }).toBe(0);
    // the server goes on serving
    expectPdf(await compile(s.url, { engine: "pdflatex", source: doc("after") }));
  }, 30_000);
});
