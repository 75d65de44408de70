// 20 concurrent compiles: all succeed (queue) or get 503 + Retry-After beyond
// the configured concurrency and queue; no cross-talk between jobs.
import { afterAll, describe, expect, it } from "vitest";
import type { RunningServer } from "../src/server.ts";
import { compile, doc, expectPdf, pdfText, testServer } from "./helpers.ts";

const servers: RunningServer[] = [];
afterAll(() => Promise.all(servers.map((s) => s.close())));

const job = (i: number) => ({
  engine: (["pdflatex", "xelatex", "lualatex"] as const)[i % 3],
  source: doc(`Job number JOB${i}X.\\input{own}`),
  files: [{ path: "own.tex", content: `Own file of FILE${i}Y.` }],
});

describe("concurrency", () => {
  it("20 concurrent compiles all succeed with a queue, each with its own content", async () => {
    const s = await testServer({ maxConcurrent: 2, maxQueue: 40, queueTimeoutMs: 120_000 });
    servers.push(s);
    const rs = await Promise.all(Array.from({ length: 20 }, (_, i) => compile(s.url, job(i))));
    rs.forEach((r, i) => {
      expectPdf(r);
      const text = pdfText(r.body).replace(/\s+/g, " ");
      expect(text).toContain(`Job number JOB${i}X.`);
      expect(text).toContain(`Own file of FILE${i}Y.`);
      for (let j = 0; j < 20; j++) if (j !== i) expect(text).not.toContain(`JOB${j}X`);
    });
  }, 180_000);

  it("beyond concurrency + queue: 503 compiler_busy with Retry-After, then serves again", async () => {
    const s = await testServer({ maxConcurrent: 1, maxQueue: 1, poolSize: { pdflatex: 2 } as never });
    servers.push(s);
    const rs = await Promise.all(Array.from({ length: 20 }, (_, i) => compile(s.url, { ...job(i), engine: "pdflatex" })));
    const ok = rs.filter((r) => r.status === 200);
    const busy = rs.filter((r) => r.status === 503);
    expect(ok.length + busy.length).toBe(20);
    expect(ok.length).toBeGreaterThanOrEqual(2);
    expect(busy.length).toBeGreaterThan(0);
    for (const r of busy) {
      expect(r.json.error.code).toBe("compiler_busy");
      expect(Number(r.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    }
    expectPdf(await compile(s.url, job(0)));
  }, 120_000);
});
