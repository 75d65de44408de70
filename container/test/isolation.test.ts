// A job's programs can replace any folder of their own with a link to anywhere on the host. The
// server must never follow one: not when it carries a pass's files to the next pass, not when it
// reads the log, the tools' inputs or the PDF, not when it removes the job. (Shell escape is the
// simplest way to plant a link; any program a job runs could do the same.)
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningServer } from "../src/server.ts";
import { runtimeLuaPath } from "../src/sandbox.ts";
import { jobsDir } from "../src/workdir.ts";
import { compile, pdfText, testServer, type Result } from "./helpers.ts";

let s: RunningServer;
let victim: string;

beforeAll(async () => {
  s = await testServer({ poolSize: { pdflatex: 1, xelatex: 0, lualatex: 1 } });
  // a folder outside the job root that no job should ever reach: another account's files
  victim = mkdtempSync(path.join(os.tmpdir(), "victim-"));
}, 120_000);

afterAll(async () => {
  await s?.close();
  rmSync(victim, { recursive: true, force: true });
});

function plantVictim(): void {
  writeFileSync(path.join(victim, "secret.tex"), "\\def\\secret{VICTIMSECRET}\n");
  writeFileSync(path.join(victim, "main.log"), "! VICTIMLOG\nl.1 VICTIMLOG\n");
}

/** Everything an answer carries, as text: the JSON error (with its log) or the PDF's text. */
function answerText(r: Result): string {
  if (r.status === 200) return pdfText(r.body);
  return r.body.toString("utf8");
}

/** A document in folder `s` whose first pass runs `cmd` from the job's root, then asks for a second pass. */
function swapping(cmd: string, rest = ""): { engine: "pdflatex"; shellEscape: true; mainPath: string; source: string } {
  const source = [
    "\\documentclass{article}",
    "\\begin{document}",
    "\\tableofcontents",
    "\\section{A}",
    `\\immediate\\write18{cd /job && ${cmd}}`,
    rest,
    "\\end{document}",
  ].join("\n");
  return { engine: "pdflatex", shellEscape: true, mainPath: "s/main.tex", source };
}

describe("a folder swapped for a link", () => {
  it("between passes: nothing outside the job is moved into it or read (422, the other folder intact)", async () => {
    plantVictim();
    // pass 2 would find the victim's files in its folder (and main.tex at the root, through TEXINPUTS)
    const body = swapping(`[ -e s.real ] || { mv s s.real && ln -s ${victim} s && cp s.real/main.tex main.tex; }`, "\\IfFileExists{secret.tex}{\\input{secret.tex}\\secret}{nosecret}");
    const r = await compile(s.url, body);
    expect(answerText(r)).not.toContain("VICTIMSECRET");
    expect(readdirSync(victim).sort()).toEqual(["main.log", "secret.tex"]);
    expect(r.status).toBe(422);
    expect(r.json.error.code).toBe("compile_error");
    expect(r.json.error.message).toContain("replaced its main file's folder");
  });

  it("in the last pass: the log is not read through it", async () => {
    plantVictim();
    const source = ["\\documentclass{article}", "\\begin{document}", `\\immediate\\write18{cd /job && mv s s.real && ln -s ${victim} s}`, "\\undefinedcommand", "\\end{document}"].join("\n");
    const r = await compile(s.url, { engine: "pdflatex", shellEscape: true, mainPath: "s/main.tex", source });
    expect(r.status).toBe(422);
    expect(answerText(r)).not.toContain("VICTIMLOG");
    expect(readdirSync(victim).sort()).toEqual(["main.log", "secret.tex"]);
  });

  it("pointing at the server's runtime folder: it stays, and lualatex still compiles for everyone", async () => {
    const runtime = path.dirname(runtimeLuaPath(s.config.jobRoot));
    const r = await compile(s.url, swapping(`[ -e s.real ] || { mv s s.real && ln -s ${runtime} s; }`));
    expect(r.status).toBe(422);
    expect(existsSync(runtimeLuaPath(s.config.jobRoot))).toBe(true);
    const lua = await compile(s.url, { engine: "lualatex", source: "\\documentclass{article}\\begin{document}Lua fine\\end{document}" });
    expect(lua.status).toBe(200);
    // healthy again once the pools have refilled (the lualatex pool was just used)
    let health = 0;
    for (let i = 0; i < 100 && health !== 200; i++) {
      if (i) await new Promise((r) => setTimeout(r, 100));
      health = (await fetch(`${s.url}/healthz`)).status;
    }
    expect(health).toBe(200);
  });

  it("the PDF is not read through it", async () => {
    const other = mkdtempSync(path.join(os.tmpdir(), "victim-pdf-"));
    writeFileSync(path.join(other, "main.pdf"), "%PDF-1.4 VICTIMPDF\n");
    try {
      // the engine's folder moves away with it (its working directory), so its own PDF is in s.real
      const source = ["\\documentclass{article}", "\\begin{document}", "x", `\\immediate\\write18{cd /job && mv s s.real && ln -s ${other} s}`, "\\end{document}"].join("\n");
      const r = await compile(s.url, { engine: "pdflatex", shellEscape: true, mainPath: "s/main.tex", source });
      expect(r.body.toString("latin1")).not.toContain("VICTIMPDF");
      expect(r.status).toBe(422);
      expect(readdirSync(other)).toEqual(["main.pdf"]);
    } finally {
      rmSync(other, { recursive: true, force: true });
    }
  });
});

/** Processes whose command line names the server's jobs folder (engines, their sandboxes). */
function engineProcesses(): number {
  const needle = jobsDir(s.config);
  let n = 0;
  for (const p of readdirSync("/proc")) {
    if (!/^\d+$/.test(p)) continue;
    try {
      if (readFileSync(`/proc/${p}/cmdline`, "latin1").includes(needle)) n++;
    } catch {
      /* gone */
    }
  }
  return n;
}

async function settled(): Promise<number> {
  // the pools refill after each job: wait until the count has not changed for a while
  let last = -1;
  for (let i = 0; i < 60; i++) {
    await new Promise((r) => setTimeout(r, 250));
    const n = engineProcesses();
    if (n === last) return n;
    last = n;
  }
  return last;
}

describe("a job that renames its own folder", () => {
  it("and leaves a file in its place: a 422, and no engine or folder is kept", async () => {
    const before = await settled();
    const dirsBefore = readdirSync(jobsDir(s.config)).length;
    for (let i = 0; i < 3; i++) {
      const r = await compile(s.url, swapping("[ -e s2 ] || { mv s s2 && echo x > s; }"));
      expect(r.status).toBe(422);
      expect(r.json.error.message).toContain("replaced its main file's folder");
    }
    expect(await settled()).toBeLessThanOrEqual(before);
    // The pools refill (a warm engine's folder is made) while the last job's folder is removed: the count
    // may be one over for a moment on a busy machine. A kept folder stays over for good.
    let dirs = readdirSync(jobsDir(s.config)).length;
    for (let i = 0; i < 40 && dirs > dirsBefore; i++) {
      await new Promise((r) => setTimeout(r, 250));
      dirs = readdirSync(jobsDir(s.config)).length;
    }
    expect(dirs).toBeLessThanOrEqual(dirsBefore);
  });
});
