// A warm xelatex engine does its font set-up while it waits (engine.ts XETEX_FONT_WARMUP): its
// job does not pay for fontconfig's configuration and caches. The engines that warm up are started
// with their job's name, so \jobname, the log and the outputs keep the main file's name. Beside
// each, its PDF driver waits on its configuration (driver-warm.ts), out of the job's reach, and
// none is left behind by the jobs that do not use theirs.
import { readdirSync, readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { driversDir } from "../src/driver-warm.ts";
import { SANDBOX_DRIVER } from "../src/sandbox.ts";
import type { RunningServer } from "../src/server.ts";
import { compile, doc, pdfText, testServer } from "./helpers.ts";

let server: RunningServer;
beforeAll(async () => {
  server = await testServer({ engines: ["xelatex"], poolSize: { pdflatex: 0, xelatex: 1, lualatex: 0 } });
}, 60_000);
afterAll(() => server?.close());

/** This process and every process below it (the server runs in the test's process). */
function descendants(pid: number): number[] {
  const out = [pid];
  for (let i = 0; i < out.length; i++) {
    try {
      for (const c of readFileSync(`/proc/${out[i]}/task/${out[i]}/children`, "utf8").split(" ")) if (c.trim()) out.push(Number(c));
    } catch {
      /* gone */
    }
  }
  return out;
}

const read = (p: string) => {
  try {
    return readFileSync(p, "utf8");
  } catch {
    return "";
  }
};

const named = (comm: string) => descendants(process.pid).filter((p) => read(`/proc/${p}/comm`).trim() === comm);

/** fontconfig keeps the cache files it loaded mapped for as long as it lives. */
const FONTCONFIG_CACHE = /\/fontconfig\/[^/\s]*\.cache-\d+$/m;

describe("a warm xelatex engine", () => {
  it("has set up fontconfig before it is given a job", async () => {
    let warm: number[] = [];
    for (let i = 0; i < 200 && warm.length === 0; i++) {
      await new Promise((r) => setTimeout(r, 50));
      const engines = descendants(process.pid).filter((p) => read(`/proc/${p}/comm`).trim() === "xelatex");
      // an engine waiting for its go line, with fontconfig's caches loaded
      warm = engines.filter((p) => FONTCONFIG_CACHE.test(read(`/proc/${p}/maps`)));
    }
    expect(server.pools.get("xelatex")!.stats().served).toBe(0);
    expect(warm.length).toBeGreaterThan(0);
  }, 20_000);

  it("keeps the main file's name as the job's name: main.tex from the pool, another name from an engine of its own", async () => {
    const source = doc("Job \\jobname.");
    const main = await compile(server.url, { engine: "xelatex", source });
    expect(main.status).toBe(200);
    expect(pdfText(main.body)).toContain("Job main.");
    const before = server.pools.get("xelatex")!.stats();
    const paper = await compile(server.url, { engine: "xelatex", source, mainPath: "paper.tex" });
    expect(paper.status, paper.body.toString().slice(0, 300)).toBe(200);
    expect(pdfText(paper.body)).toContain("Job paper.");
    // the pool's engines are started for main.tex: this job took none of them
    expect(server.pools.get("xelatex")!.stats().served).toBe(before.served);
  }, 60_000);

  it("reports a document's errors from its own log", async () => {
    const r = await compile(server.url, { engine: "xelatex", source: doc("\\undefinedcommand"), mainPath: "paper.tex" });
    expect(r.status).toBe(422);
    expect(r.json.error.message).toMatch(/Undefined control sequence/);
    expect(r.json.error.file).toBe("paper.tex");
    // the log the answer carries is the job's: nothing of the server's first line
    expect(r.json.error.log).not.toContain("TEXPOOL");
  }, 60_000);
});

describe("a warm xelatex engine's PDF driver", () => {
  /** Waits until the pool is full and every warm engine has its driver waiting on its configuration. */
  async function settled(): Promise<{ engines: number[]; drivers: number[] }> {
    let last = { engines: [] as number[], drivers: [] as number[] };
    for (let i = 0; i < 300; i++) {
      const s = server.pools.get("xelatex")!.stats();
      last = { engines: named("xelatex"), drivers: named("xdvipdfmx") };
      // blocked opening or reading its FIFO (the kernel's names for that wait vary)
      const waiting = last.drivers.filter((p) => /pipe|partner/.test(read(`/proc/${p}/wchan`)));
      // only the pool's engines are left (those started for earlier jobs are killed once their job ends)
      const full = s.ready === s.target && s.starting === 0 && last.engines.length === s.ready;
      const folders = readdirSync(driversDir(server.config)).length;
      if (full && waiting.length === last.drivers.length && last.drivers.length === last.engines.length && folders === last.engines.length) return last;
      await new Promise((r) => setTimeout(r, 50));
    }
    return last;
  }

  it("waits, started before the job, on a configuration only the server can give it", async () => {
    const { engines, drivers } = await settled();
    expect(engines.length).toBe(1);
    expect(drivers.length).toBe(1);
    expect(read(`/proc/${drivers[0]}/wchan`)).toMatch(/pipe|partner/);
    // bwrap's init, then xdvipdfmx: its sandbox shows the server's folder, read-only
    expect(read(`/proc/${drivers[0]}/cmdline`).split("\0")).toContain(`${SANDBOX_DRIVER}/fonts.map`);
    expect(readdirSync(driversDir(server.config)).length).toBe(1);
  }, 30_000);

  it("is out of a shell-escape job's reach: its engine's sandbox has no driver folder", async () => {
    const source = doc("\\immediate\\write18{ls /opt/texpool > seen.txt 2>&1; echo end >> seen.txt}\\input{seen.txt}");
    const r = await compile(server.url, { engine: "xelatex", source, shellEscape: true });
    expect(r.status, r.body.toString().slice(0, 300)).toBe(200);
    const text = pdfText(r.body);
    expect(text).toContain("end");
    expect(text).not.toContain("driver");
  }, 60_000);

  it("gives the PDF of one-pass, two-pass and failed jobs, and none of their drivers is left running", async () => {
    const two = doc("\\section{One}\\label{a} See \\ref{a} on page \\pageref{a}. $x^2$");
    for (const source of [doc("Hello."), two, doc("\\undefinedcommand")]) {
      const r = await compile(server.url, { engine: "xelatex", source });
      expect([200, 422]).toContain(r.status);
      if (r.status === 200) expect(pdfText(r.body)).toMatch(/Hello|See 1/);
    }
    const r = await compile(server.url, { engine: "xelatex", source: two, mainPath: "sub/paper.tex" });
    expect(r.status).toBe(200);
    expect(r.headers.get("x-compile-passes")).toBe("2");
    const { engines, drivers } = await settled();
    expect(drivers.length).toBe(engines.length);
    expect(readdirSync(driversDir(server.config)).length).toBe(engines.length);
  }, 120_000);
});
