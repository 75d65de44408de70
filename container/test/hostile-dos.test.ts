// Denial of service: requests built to make the server's own scans of user text
// slow each get a quick 4xx, while another account's compile is answered as usual
// and the event loop never stalls. Also the per-job caps on files and log bytes.
import { mkdtempSync, rmSync, writeFileSync, mkdirSync, promises as fs } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BodyParser, INLINE_MAX_BYTES, PARSER_NICE, parseInline } from "../src/body.ts";
import { loadConfig } from "../src/config.ts";
import { checkJobDir, LoopLagMonitor } from "../src/limits.ts";
import { exitOf, runToExit } from "../src/supervise.ts";
import { WorkDir } from "../src/workdir.ts";
import { spawn } from "node:child_process";
import type { RunningServer } from "../src/server.ts";
import { type Attack, bcfFlood, bigLogFailure, bigLogThenSpin, HELLO, usepackageFlood } from "./attacks.ts";
import { compile, doc, expectPdf, testServer } from "./helpers.ts";

let s: RunningServer;
beforeAll(async () => {
  // its documents are all pdflatex: no other engine is warmed
  s = await testServer({ limits: { defaultTimeoutMs: 25_000 } as never, poolSize: { pdflatex: 2, xelatex: 0, lualatex: 0 } });
});
afterAll(() => s?.close());

async function lag(): Promise<{ p99Ms: number; maxMs: number }> {
  const r = await fetch(`${s.url}/healthz`);
  return (await r.json()).eventLoopLagMs;
}

/** The attack, and a hello world of another account sent while it runs. */
async function underAttack(a: Attack) {
  const t0 = Date.now();
  const attack = compile(s.url, a.body).then((r) => ({ r, ms: Date.now() - t0 }));
  await new Promise((r) => setTimeout(r, 300));
  const t1 = Date.now();
  const bystander = await compile(s.url, { engine: "pdflatex", source: HELLO });
  const bystanderMs = Date.now() - t1;
  return { attack: await attack, bystander, bystanderMs };
}

describe("scans of user text stay cheap", () => {
  // "quick" and "as usual" are generous bounds: before, each attack held the only thread for minutes
  for (const make of [bcfFlood, usepackageFlood, () => bigLogFailure(6)]) {
    const a = make();
    it(`${a.name}: a quick 422 compile_error; another account's compile meanwhile is answered`, async () => {
      const { attack, bystander, bystanderMs } = await underAttack(a);
      // each is a broken document (malformed main.bcf, a missing package, an undefined command)
      expect(attack.r.status, JSON.stringify(attack.r.json)).toBe(422);
      expect(attack.r.json.error.code).toBe("compile_error");
      expect(attack.ms).toBeLessThan(20_000);
      expectPdf(bystander);
      expect(bystanderMs).toBeLessThan(15_000);
      // the thread was never held for long: a scan that regressed held it for minutes. The lag is
      // that of this test's own process (the server runs in it) on a shared machine, so the bound
      // is seconds; bench:hostile holds the server's p99 under each attack to its 100 ms floor
      expect((await lag()).maxMs).toBeLessThan(5_000);
    });
  }

  it("a missing package is still found on its line, next to a long line of \\usepackage{", async () => {
    // shorter than TeX's input buffer, so TeX itself reads it and reports the missing file
    const flood = "\\usepackage{".repeat(12_000);
    const r = await compile(s.url, { engine: "pdflatex", source: `\\documentclass{article}\n\\usepackage{amsmath}\n\\usepackage{nope}\n${flood}\n\\begin{document}\nx\n\\end{document}\n` });
    expect(r.status).toBe(422);
    expect(r.json.error).toMatchObject({ code: "compile_error", line: 3, file: "main.tex" });
    expect(r.json.error.message).toContain("nope.sty' not found");
  });

  it("a failure after a large log answers the error and only the log's tail", async () => {
    const r = await compile(s.url, bigLogFailure(6).body);
    expect(r.status).toBe(422);
    expect(r.json.error.code).toBe("compile_error");
    expect(Buffer.byteLength(r.json.error.log)).toBeLessThanOrEqual(s.config.limits.logTailBytes);
    expect(r.json.error.log).toContain("Undefined control sequence");
  });
});

describe("event-loop lag", () => {
  it("the monitor sees the thread held up, and /healthz reports it", async () => {
    const m = new LoopLagMonitor();
    try {
      await new Promise((r) => setTimeout(r, 100));
      const until = Date.now() + 150;
      while (Date.now() < until); // hold the thread
      await new Promise((r) => setTimeout(r, 50));
      const st = m.stats();
      expect(st.maxMs).toBeGreaterThanOrEqual(100);
      expect(st.p99Ms).toBe(0); // a few dozen samples have no 99th percentile: the stall is the max
      expect(st.windowMs).toBeGreaterThan(0);
    } finally {
      m.stop();
    }
    const h = await (await fetch(`${s.url}/healthz`)).json();
    expect(h.eventLoopLagMs).toEqual({ p99Ms: expect.any(Number), maxMs: expect.any(Number), windowMs: expect.any(Number) });
  });
});

describe("request bodies", () => {
  it("a large body is parsed and validated in the worker thread, with the same result as in place", async () => {
    const limits = loadConfig({}).limits;
    const parser = new BodyParser(limits);
    try {
      const big = Buffer.from(JSON.stringify(bcfFlood().body));
      expect(big.length).toBeGreaterThan(INLINE_MAX_BYTES);
      const off = await parser.parse(Buffer.from(big)); // parse() takes the bytes over
      const inline = parseInline(big, limits);
      expect(off.ok && inline.ok).toBe(true);
      if (!off.ok || !inline.ok) return;
      expect(off.value.source).toBe(inline.value.source);
      expect(off.value.files.map((f) => [f.path, Buffer.isBuffer(f.data), f.data.length])).toEqual(inline.value.files.map((f) => [f.path, true, f.data.length]));
      expect(off.value.files[0]!.data.equals(inline.value.files[0]!.data)).toBe(true);
      // malformed and invalid large bodies: the same issues as in place
      const broken = Buffer.concat([big, Buffer.from("}")]);
      expect(await parser.parse(broken)).toEqual({ ok: false, issues: [{ path: "", message: "body is not valid JSON" }] });
      const unknownEngine = Buffer.from(JSON.stringify({ ...bcfFlood().body, engine: "tex" }));
      expect(await parser.parse(Buffer.from(unknownEngine))).toEqual(parseInline(unknownEngine, limits));
      // the parser thread runs below the server's priority (a thread of this process at PARSER_NICE)
      const nices = await Promise.all(
        (await fs.readdir("/proc/self/task")).map(async (t) => Number((await fs.readFile(`/proc/self/task/${t}/stat`, "utf8").catch(() => ") x")).split(") ")[1]!.split(" ")[16])),
      );
      expect(nices).toContain(PARSER_NICE);
    } finally {
      await parser.close();
    }
  });
});

describe("per-job caps", () => {
  it("a job creating more files than allowed is stopped: 422 output_too_large (files)", async () => {
    const many = s.config.limits.maxJobFiles * 3;
    const source = doc(`\\newwrite\\w\\count255=0 \\loop\\immediate\\openout\\w=f\\the\\count255.txt \\immediate\\closeout\\w\\advance\\count255 by 1 \\ifnum\\count255<${many} \\repeat done`);
    const r = await compile(s.url, { engine: "pdflatex", source, timeoutMs: 20_000 });
    expect(r.status).toBe(422);
    expect(r.json.error).toMatchObject({ code: "output_too_large", limit: "files", max: s.config.limits.maxJobFiles });
  });

  it("a log over the cap is stopped: 422 output_too_large (log_bytes) with the tail", async () => {
    // Over the log cap, under the per-file cap (RLIMIT_FSIZE kills TeX at once with a plain
    // too_large, so a log that outgrew it between two looks of the watcher tripped that instead),
    // then silent: only the log cap can end this job before its time limit.
    const L = s.config.limits;
    const mib = Math.floor((L.maxLogBytes + L.maxOutputFileBytes) / 2 / 2 ** 20);
    expect(mib * 2 ** 20).toBeGreaterThan(L.maxLogBytes + 2 ** 20);
    expect(mib * 2 ** 20).toBeLessThan(Math.min(L.maxOutputFileBytes, L.maxJobDirBytes) - 2 ** 20);
    const r = await compile(s.url, bigLogThenSpin(mib).body);
    expect(r.status).toBe(422);
    expect(r.json.error).toMatchObject({ code: "output_too_large", limit: "log_bytes", max: s.config.limits.maxLogBytes });
    expect(r.json.error.log).toContain("File `a.b:1:");
  });

  it("a job over its time limit: 422 compile_timeout with the log tail", async () => {
    // 32 KiB of log first: what TeX still held in its stdio buffer is lost with the process
    const before = "\\count255=0 \\loop\\message{BEFORE-THE-LOOP}\\advance\\count255 by 1 \\ifnum\\count255<2000 \\repeat";
    const r = await compile(s.url, { engine: "pdflatex", source: doc(`${before}\\def\\x{\\x}\\x`), timeoutMs: 1500 });
    expect(r.status).toBe(422);
    expect(r.json.error.code).toBe("compile_timeout");
    expect(r.json.error.log).toContain("BEFORE-THE-LOOP");
  });

  it("a process that makes too many files and exits before the watch's first look is still over the cap", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "jobcaps-"));
    try {
      // 60 files in well under the watch's 200 ms, then the exit
      const child = spawn("sh", ["-c", "i=0; while [ $i -lt 60 ]; do : > f$i; i=$((i+1)); done"], { cwd: dir, detached: true, stdio: "ignore" });
      const caps = { maxEntries: 50, maxBytes: 1_000_000, maxLogBytes: 10_000, logName: "main.log" };
      const prio = { heavy: () => false, watch: () => () => {}, settle: () => {} };
      const r = await runToExit(child, exitOf(child), new WorkDir(dir), caps, { deadline: Date.now() + 10_000, prio });
      expect(r.ending).toBe("too_many_files");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("checkJobDir: counts entries without stat, stops past the cap, sums sizes when asked", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "jobcaps-"));
    try {
      mkdirSync(path.join(dir, "sub"));
      for (let i = 0; i < 30; i++) writeFileSync(path.join(dir, "sub", `f${i}`), "x".repeat(100));
      writeFileSync(path.join(dir, "main.log"), "y".repeat(5000));
      const caps = { maxEntries: 100, maxBytes: 1_000_000, maxLogBytes: 10_000, logName: "main.log" };
      expect(await checkJobDir(dir, caps, true)).toBeUndefined();
      expect(await checkJobDir(dir, { ...caps, maxEntries: 20 }, false)).toBe("too_many_files");
      expect(await checkJobDir(dir, { ...caps, maxBytes: 6000 }, true)).toBe("too_large");
      expect(await checkJobDir(dir, { ...caps, maxBytes: 6000 }, false)).toBeUndefined(); // sizes only on the slow cadence
      expect(await checkJobDir(dir, { ...caps, maxLogBytes: 4000 }, false)).toBe("log_too_large");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("the server still serves normally", async () => {
    expectPdf(await compile(s.url, { engine: "pdflatex", source: HELLO }));
  });
});
