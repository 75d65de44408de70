// A compile that runs out of time is the document's answer, 422 compile_timeout: whether the compile
// server says so or no answer arrives by the transport's deadline, it is never sent to another
// instance and an async job ends failed after one attempt.
import { env } from "cloudflare:test";
import { eq } from "drizzle-orm";
import { describe, expect, inject, it } from "vitest";
import { ContainerCompiler } from "../../../src/compile/compiler-container.ts";
import { UrlCompiler } from "../../../src/compile/compiler-url.ts";
import { runCompileJob } from "../../../src/compile/consumer.ts";
import type { TexContainer } from "../../../src/compile/container.ts";
import { jobInputKey } from "../../../src/compile/jobs.ts";
import { getDb } from "../../../src/db/client.ts";
import { compileJobs } from "../../../src/db/schema/index.ts";
import { ApiError } from "../../../src/platform/errors.ts";
import { createKey } from "../helpers.ts";
import { insertJob, recordingQueue } from "./helpers.ts";

const LOOP = "\\documentclass{article}\\begin{document}\\loop\\iftrue\\repeat\\end{document}";

/** A stand-in TEX_CONTAINER namespace: each instance answers with `answer(name)`; records the calls. */
function fakeInstances(answer: (name: string) => Promise<Response>) {
  const calls: string[] = [];
  const ns = {
    getByName: (name: string) => ({
      fetch: (_url: string, _init: RequestInit) => {
        calls.push(name);
        return answer(name);
      },
    }),
  };
  return { ns: ns as unknown as DurableObjectNamespace<TexContainer>, calls };
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json", ...headers } });

async function rejection(p: Promise<unknown>): Promise<ApiError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ApiError);
  return err as ApiError;
}

describe("compile_timeout is final", () => {
  it("container transport: no answer by the deadline is 422 compile_timeout from the first instance, none other tried", async () => {
    const never = fakeInstances(() => new Promise<Response>(() => {}));
    const t = Date.now();
    const err = await rejection(new ContainerCompiler(never.ns, 4, 50).compile({ engine: "pdflatex", source: LOOP, timeoutMs: 100 }));
    expect(err).toMatchObject({ status: 422, code: "compile_timeout" });
    expect(err.message).toContain("100 ms");
    expect(never.calls).toHaveLength(1);
    expect(Date.now() - t).toBeLessThan(5000);
  });

  it("container transport: the server's own 422 compile_timeout is passed through, not retried; a busy instance still is", async () => {
    const inst = fakeInstances(async () =>
      inst.calls.length === 1
        ? json(503, { error: { code: "compiler_busy", message: "busy" } }, { "retry-after": "1" })
        : json(422, { error: { code: "compile_timeout", message: "Pass 1 did not finish", log: "tail" } }),
    );
    const err = await rejection(new ContainerCompiler(inst.ns, 4).compile({ engine: "pdflatex", source: LOOP, timeoutMs: 1000 }));
    expect(err).toMatchObject({ status: 422, code: "compile_timeout", details: { log: "tail" } });
    expect(inst.calls).toHaveLength(2);
    expect(new Set(inst.calls).size).toBe(2);
  });

  it("URL transport: no answer by the deadline is 422 compile_timeout", async () => {
    // a slack below the server's own limit: the transport's deadline passes while TeX still loops
    const err = await rejection(new UrlCompiler(inject("compilerUrl"), -800).compile({ engine: "pdflatex", source: `% ${crypto.randomUUID()}\n${LOOP}`, timeoutMs: 1000 }));
    expect(err).toMatchObject({ status: 422, code: "compile_timeout" });
  });

  it("an async job over its time limit ends failed with compile_timeout after one attempt, nothing re-queued", async () => {
    const k = await createKey("pro");
    const id = await insertJob(env, k.accountId, LOOP);
    await env.FILES.put(jobInputKey(k.accountId, id), JSON.stringify({ engine: "pdflatex", source: `% ${id}\n${LOOP}`, timeoutMs: 1000 }));
    const q = recordingQueue();
    await runCompileJob({ ...env, COMPILE_QUEUE: q.queue }, { jobId: id, accountId: k.accountId });
    const job = await getDb(env.DB).select().from(compileJobs).where(eq(compileJobs.id, id)).get();
    expect(job).toMatchObject({ status: "failed", attempt: 1 });
    expect(JSON.parse(job!.error!)).toMatchObject({ code: "compile_timeout" });
    expect(q.sent).toEqual([]);
  });
});
