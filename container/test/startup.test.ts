// Start-up from any checkout location: engines (nobody, when the server runs as root) read only
// copies the server placed within their reach; what they cannot reach, or an engine that cannot
// start, makes start-up fail at once with the path or the engine and its error, never a silent wait.
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type * as Server from "../src/server.ts";
import { PoolNotReady } from "../src/pool.ts";
import { runtimeLuaPath, RuntimeFilesUnreachable } from "../src/sandbox.ts";
import { compile, doc, expectPdf } from "./helpers.ts";

const isRoot = process.getuid?.() === 0;
const made: string[] = [];
afterAll(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true });
});

/** A 0700 directory, like `mktemp -d` or a root's home: out of reach for every other uid. */
function privateDir(): string {
  const d = mkdtempSync(path.join(os.tmpdir(), "texcompile-private-"));
  made.push(d);
  return d;
}

describe("compile server start-up", () => {
  it("runs lualatex when its own code lives in a 0700 directory (engines run as nobody under root)", async () => {
    const copy = path.join(privateDir(), "checkout");
    cpSync(path.join(import.meta.dirname, "../src"), path.join(copy, "src"), { recursive: true });
    expect(statSync(path.dirname(copy)).mode & 0o777).toBe(0o700);
    const { startServer } = (await import(path.join(copy, "src/server.ts"))) as typeof Server;
    const s = await startServer({ port: 0, host: "127.0.0.1", env: {}, engines: ["lualatex"], poolSize: { pdflatex: 0, xelatex: 0, lualatex: 1 } });
    try {
      // the copy engines read: a server-owned 0755 directory and a 0644 file under the job root
      const lua = runtimeLuaPath(s.config.jobRoot);
      expect(statSync(lua).mode & 0o777).toBe(0o644);
      expect(statSync(path.dirname(lua)).mode & 0o777).toBe(0o755);
      const r = await compile(s.url, { engine: "lualatex", source: doc("\\directlua{tex.print('from lua')}") });
      expectPdf(r);
    } finally {
      await s.close();
    }
  }, 60_000);

  it.runIf(isRoot)("refuses within a second, naming the path and the fix, when the job root is out of the engines' reach", async () => {
    const { startServer } = await import("../src/server.ts");
    const jobRoot = path.join(privateDir(), "jobs");
    const started = Date.now();
    const err = await startServer({ port: 0, host: "127.0.0.1", env: {}, engines: [], jobRoot }).then(
      async (s) => {
        await s.close();
        return null;
      },
      (e: unknown) => e as Error,
    );
    expect(err).toBeInstanceOf(RuntimeFilesUnreachable);
    expect(err!.message).toContain(jobRoot);
    expect(err!.message).toContain("JOB_ROOT");
    expect(Date.now() - started).toBeLessThan(1000);
    expect(existsSync(jobRoot)).toBe(false);
  });

  it("an engine that cannot start fails start-up within seconds with the engine and its error, and leaves nothing behind", async () => {
    const { startServer } = await import("../src/server.ts");
    const jobRoot = path.join(os.tmpdir(), `texcompile-nostart-${process.pid}`);
    mkdirSync(path.dirname(jobRoot), { recursive: true });
    const started = Date.now();
    // 64 MiB of address space: xelatex exits with "memory exhausted" while loading its format
    const err = await startServer({ port: 0, host: "127.0.0.1", env: {}, engines: ["xelatex"], poolSize: { pdflatex: 0, xelatex: 1, lualatex: 0 }, jobRoot, limits: { memoryBytes: 64 * 1024 * 1024 } as never }).then(
      async (s) => {
        await s.close();
        return null;
      },
      (e: unknown) => e as Error,
    );
    expect(err).toBeInstanceOf(PoolNotReady);
    expect(err!.message).toMatch(/^xelatex cannot start \(3 attempts in a row failed\): exited \(code \d+\) before it was ready: .*memory/);
    expect(Date.now() - started).toBeLessThan(30_000); // "does not hang": three starts and two 1 s pauses
    expect(existsSync(jobRoot)).toBe(false);
  }, 60_000);
});
