import { describe, expect, it } from "vitest";
import { retrySchedule } from "../../src/compile/callbacks.ts";
import { compileNamespace, compileRequestInit, interpretServerAnswer } from "../../src/compile/compiler.ts";
import { ContainerCompiler, instanceOrder } from "../../src/compile/compiler-container.ts";
import { checkCompileLimits } from "../../src/compile/input.ts";
import { COMPILE_LIMITS } from "../../src/compile/limits.ts";
import { ApiError } from "../../src/platform/errors.ts";

const input = { engine: "pdflatex" as const, source: "x" };
const pdfResponse = () =>
  new Response("%PDF-1.5\n...%%EOF", { headers: { "content-type": "application/pdf", "x-compile-duration-ms": "123", "x-engine": "pdflatex", "x-compile-pages": "2", "x-compile-passes": "1" } });
const json = (status: number, body: unknown, headers: Record<string, string> = {}) => new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json", ...headers } });

async function rejection(p: Promise<unknown>): Promise<ApiError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof ApiError) return err;
    throw err;
  }
  throw new Error("expected a rejection");
}

describe("interpretServerAnswer", () => {
  it("reads the PDF and its headers", async () => {
    const out = await interpretServerAnswer(pdfResponse(), input);
    expect(out).toMatchObject({ durationMs: 123, pages: 2, passes: 1, engine: "pdflatex" });
    expect(new TextDecoder().decode(out.pdf)).toMatch(/^%PDF-/);
  });

  it("passes the server's 4xx errors through with their details", async () => {
    const err = await rejection(interpretServerAnswer(json(422, { error: { code: "compile_error", message: "Undefined control sequence.", line: 4, file: "main.tex", errors: [{}], log: "..." } }), input));
    expect(err.status).toBe(422);
    expect(err.toBody().error).toEqual({ code: "compile_error", message: "Undefined control sequence.", line: 4, file: "main.tex", errors: [{}], log: "..." });
    expect((await rejection(interpretServerAnswer(json(413, { error: { code: "payload_too_large", message: "big" } }), input))).status).toBe(413);
  });

  it("maps busy to 503 compiler_busy with Retry-After, and anything unexpected to 503", async () => {
    const busy = await rejection(interpretServerAnswer(json(503, { error: { code: "compiler_busy", message: "busy" } }, { "retry-after": "4" }), input));
    expect(busy).toMatchObject({ status: 503, code: "compiler_busy" });
    expect(busy.headers["Retry-After"]).toBe("4");
    const odd = await rejection(interpretServerAnswer(json(500, { error: { code: "internal_error", message: "boom" } }), input));
    expect(odd.status).toBe(503);
    expect(odd.headers["Retry-After"]).toBeTruthy();
  });

  it("refuses a PDF over the size limit as 422 output_too_large", async () => {
    const res = new Response("x", { headers: { "content-type": "application/pdf", "content-length": String(COMPILE_LIMITS.maxPdfBytes + 1) } });
    expect(await rejection(interpretServerAnswer(res, input))).toMatchObject({ status: 422, code: "output_too_large" });
  });
});

describe("container transport", () => {
  function fakeNamespace(answer: (name: string, call: number) => Response | Promise<Response>) {
    const calls: string[] = [];
    const ns = {
      getByName: (name: string) => ({
        fetch: async () => {
          calls.push(name);
          return answer(name, calls.length);
        },
      }),
    };
    return { ns: ns as unknown as ConstructorParameters<typeof ContainerCompiler>[0], calls };
  }

  it("instanceOrder spreads consecutive requests and never repeats within one request", () => {
    const firsts = new Set<string>();
    for (let i = 0; i < 8; i++) {
      const order = instanceOrder(4, 3);
      expect(new Set(order).size).toBe(3);
      firsts.add(order[0]!);
    }
    expect(firsts.size).toBe(4);
  });

  it("instanceOrder sends an account (namespace) to the same instance first, retries elsewhere", () => {
    const ns = "00000007aaaaaaaaaaaaaaaaaaaaaaaa";
    for (let i = 0; i < 5; i++) {
      const order = instanceOrder(4, 3, Math.random, ns);
      expect(order[0]).toBe("tex-3");
      expect(new Set(order).size).toBe(3);
    }
  });

  it("the request to the compile server carries mainPath, draft, shellEscape and the namespace, only when set", async () => {
    const body = (init: RequestInit) => JSON.parse(init.body as string) as Record<string, unknown>;
    expect(body(compileRequestInit(input))).toEqual({ engine: "pdflatex", source: "x", files: [], timeoutMs: COMPILE_LIMITS.defaultTimeoutMs });
    const ns = await compileNamespace("acc_1");
    expect(ns).toMatch(/^[0-9a-f]{32}$/);
    expect(ns).not.toBe(await compileNamespace("acc_2"));
    expect(body(compileRequestInit({ ...input, mainPath: "a/b.tex", draft: true }, { namespace: ns }))).toMatchObject({ mainPath: "a/b.tex", draft: true, namespace: ns });
    expect(body(compileRequestInit({ ...input, shellEscape: true }))).toMatchObject({ shellEscape: true });
    expect(body(compileRequestInit({ ...input, shellEscape: false }))).not.toHaveProperty("shellEscape");
  });

  it("a cold or failed instance is retried on another one", async () => {
    const { ns, calls } = fakeNamespace((_n, call) => (call === 1 ? new Response("Failed to start container: boom", { status: 500 }) : pdfResponse()));
    const out = await new ContainerCompiler(ns, 4).compile(input);
    expect(out.pages).toBe(2);
    expect(calls).toHaveLength(2);
    expect(calls[0]).not.toBe(calls[1]);
  });

  it("gives up after a bounded number of tries with 503", async () => {
    const { ns, calls } = fakeNamespace(() => new Response("There is no Container instance available at this time.", { status: 503 }));
    const err = await rejection(new ContainerCompiler(ns, 10).compile(input));
    expect(err).toMatchObject({ status: 503, code: "service_unavailable" });
    expect(calls).toHaveLength(3);
  });

  it("busy everywhere is 503 compiler_busy; a LaTeX error is final at once", async () => {
    const busy = fakeNamespace(() => json(503, { error: { code: "compiler_busy", message: "busy" } }, { "retry-after": "3" }));
    expect(await rejection(new ContainerCompiler(busy.ns, 4).compile(input))).toMatchObject({ status: 503, code: "compiler_busy" });
    const latex = fakeNamespace(() => json(422, { error: { code: "compile_error", message: "bad" } }));
    expect(await rejection(new ContainerCompiler(latex.ns, 4).compile(input))).toMatchObject({ status: 422 });
    expect(latex.calls).toHaveLength(1);
  });
});

describe("limits and schedules", () => {
  it("counts base64 files by decoded size", () => {
    const mib = 1024 * 1024;
    const b64 = "A".repeat(((COMPILE_LIMITS.maxTotalBytes - 10) / 3) * 4 - (((COMPILE_LIMITS.maxTotalBytes - 10) / 3) * 4) % 4);
    expect(() => checkCompileLimits({ ...input, files: [{ path: "a.bin", content: b64, encoding: "base64" }] })).not.toThrow();
    expect(() => checkCompileLimits({ ...input, files: [{ path: "a.bin", content: "x".repeat(7 * mib), encoding: "utf8" }] })).toThrow(ApiError);
  });

  it("parses WEBHOOK_RETRY_SCHEDULE and caps delays at the queue's 12 hours", () => {
    expect(retrySchedule({ WEBHOOK_RETRY_SCHEDULE: "1, 2,3" } as Env)).toEqual([1, 2, 3]);
    expect(retrySchedule({ WEBHOOK_RETRY_SCHEDULE: "" } as Env)).toEqual([5, 300, 1800, 7200, 18000, 36000, 43200, 43200, 43200]);
    expect(retrySchedule({ WEBHOOK_RETRY_SCHEDULE: "99999" } as Env)).toEqual([43200]);
  });
});
