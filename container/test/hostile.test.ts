// Hostile documents: each is refused or stopped within the limit, leaks nothing,
// and the server keeps serving normally afterwards.
import { existsSync, readFileSync } from "node:fs";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { RunningServer } from "../src/server.ts";
import { compile, doc, expectPdf, fixture, pdfAllText, pdfText, testServer, type Result } from "./helpers.ts";

let s: RunningServer;
beforeAll(async () => {
  s = await testServer({ limits: { defaultTimeoutMs: 6_000, maxOutputFileBytes: 8 * 1024 * 1024, maxJobDirBytes: 20 * 1024 * 1024 } as never });
});
afterAll(() => s?.close());
afterEach(async () => {
  // the server keeps serving the next request normally
  const r = await compile(s.url, { engine: "pdflatex", source: fixture("hello.tex") });
  expectPdf(r);
});

const PASSWD = readFileSync("/etc/passwd", "utf8").split("\n")[0]; // e.g. root:x:0:0:...

function noLeak(r: Result): void {
  const text = r.status === 200 ? pdfAllText(r.body) : JSON.stringify(r.json);
  expect(text).not.toContain(PASSWD);
  expect(text).not.toContain("root:x:0");
  expect(text).not.toContain("PWNED");
}

const engines = ["pdflatex", "xelatex", "lualatex"] as const;

describe("file system", () => {
  for (const engine of engines) {
    it(`${engine}: \\input{/etc/passwd} is refused`, async () => {
      const r = await compile(s.url, { engine, source: doc("\\input{/etc/passwd}") });
      expect(r.status).toBe(422);
      noLeak(r);
    });
    it(`${engine}: \\openout outside the job directory is refused`, async () => {
      const target = `/tmp/pwned-${engine}-${process.pid}`;
      for (const name of [target, `../pwned-${engine}`]) {
        const r = await compile(s.url, { engine, source: doc(`\\newwrite\\w\\immediate\\openout\\w=${name} \\immediate\\write\\w{PWNED}\\immediate\\closeout\\w x`) });
        expect(r.status).toBe(422);
        expect(r.json.error.message).toMatch(/I can't write on file/);
      }
      expect(existsSync(target)).toBe(false);
    });
  }
  it("\\IfFileExists does not even see /etc/passwd", async () => {
    const r = await compile(s.url, { engine: "pdflatex", source: doc("\\IfFileExists{/etc/passwd}{SEEN}{UNSEEN}") });
    expectPdf(r);
    expect(pdfText(r.body)).toContain("UNSEEN");
  });
  it("\\includegraphics of a file outside the job is refused (pdflatex)", async () => {
    const r = await compile(s.url, { engine: "pdflatex", source: doc("\\includegraphics{/usr/share/texlive/texmf-dist/tex/latex/mwe/example-image.pdf}", "\\usepackage{graphicx}\n") });
    expect(r.status).toBe(422);
  });
});

describe("shell escape", () => {
  for (const engine of engines) {
    // restricted shell escape (2): only the list of engine.ts's RESTRICTED_COMMANDS may run, in the sandbox
    it(`${engine}: \\write18 of a program outside the restricted list does nothing`, async () => {
      const marker = `/tmp/pwned18-${engine}-${process.pid}`;
      const r = await compile(s.url, { engine, source: doc(`\\immediate\\write18{touch ${marker}}shell:${engine === "lualatex" ? "\\directlua{tex.print(status.shell_escape)}" : engine === "pdflatex" ? "\\the\\pdfshellescape" : "\\the\\shellescape"}`) });
      expectPdf(r);
      expect(existsSync(marker)).toBe(false);
      expect(pdfText(r.body)).toMatch(/shell:2/);
    });
    it(`${engine}: \\input{|"cmd"} is refused`, async () => {
      const r = await compile(s.url, { engine, source: doc('\\input{|"printf QWZ%sQWZ xyz"}') });
      expect(r.status).toBe(422);
      expect(JSON.stringify(r.json)).not.toContain("QWZxyzQWZ");
      noLeak(r);
    });
  }
  it("the job runs in batch mode", async () => {
    const r = await compile(s.url, { engine: "pdflatex", source: doc("mode=\\the\\interactionmode") });
    expectPdf(r);
    expect(pdfText(r.body)).toContain("mode=0");
  });
  it("no mktex runs for a missing font", async () => {
    const r = await compile(s.url, { engine: "pdflatex", source: doc("\\font\\x=nosuchfont10 \\x hi") });
    expect(r.status).toBe(422);
    expect(r.json.error.log).not.toMatch(/mktextfm|mktexpk/);
  });
});

describe("lualatex Lua", () => {
  const lua = (code: string) => doc(`\\directlua{${code}}`);
  it("io.open cannot read /etc/passwd", async () => {
    const r = await compile(s.url, { engine: "lualatex", source: lua('local f,e=io.open("/etc/passwd") tex.print(f and ("LEAK "..f:read("l")) or "BLOCKED")') });
    expectPdf(r);
    expect(pdfText(r.body)).toContain("BLOCKED");
    noLeak(r);
  });
  it("io.open cannot write outside the job", async () => {
    const target = `/tmp/pwned-lua-${process.pid}`;
    const r = await compile(s.url, { engine: "lualatex", source: lua(`local f=io.open("${target}","w") tex.print(f and "WROTE" or "BLOCKED")`) });
    expectPdf(r);
    expect(pdfText(r.body)).toContain("BLOCKED");
    expect(existsSync(target)).toBe(false);
  });
  it("io.lines, dofile, lfs.dir, loadlib, C modules are refused", async () => {
    const code = [
      'local ok1=pcall(function() for l in io.lines("/etc/passwd") do tex.print("LEAK") end end)',
      'local ok2=pcall(dofile,"/etc/passwd")',
      'local ok3=pcall(lfs.dir,"/")',
      'local ok4=(package.loadlib==nil)',
      'local ok5=not pcall(require,"socket.core")',
      'local ok6=(debug.getupvalue==nil)',
      'tex.print("R:"..tostring(ok1)..tostring(ok2)..tostring(ok3)..tostring(ok4)..tostring(ok5)..tostring(ok6))',
    ].join(" ");
    const r = await compile(s.url, { engine: "lualatex", source: lua(code) });
    expectPdf(r);
    expect(pdfText(r.body)).toContain("R:falsefalsefalsetruetruetrue");
  });
  it("lfs reads and writes only inside the job (and still works there)", async () => {
    const target = `/tmp/pwned-lfs-${process.pid}`;
    const code = [
      'tex.print("L:"..tostring(lfs.attributes("/etc/passwd","mode"))..tostring(lfs.isfile("/etc/passwd"))',
      `..tostring(lfs.mkdir("${target}"))..tostring(lfs.touch("../x"))`,
      '..tostring(lfs.attributes("main.tex","mode"))..tostring(lfs.mkdir("made"))..tostring(lfs.isdir("made")))',
    ].join("");
    const r = await compile(s.url, { engine: "lualatex", source: lua(code) });
    expectPdf(r);
    expect(pdfText(r.body)).toContain("L:nilnilnilnilfiletruetrue");
    expect(existsSync(target)).toBe(false);
  });
  it("io.popen is unavailable and os.execute runs nothing (it says: no shell)", async () => {
    const marker = `/tmp/pwned-exec-${process.pid}`;
    const r = await compile(s.url, {
      engine: "lualatex",
      source: lua(`local a=pcall(function() return io.popen("touch ${marker}") end) tex.print("P:"..tostring(io.popen)..tostring(os.execute("touch ${marker}"))..tostring(os.execute()))`),
    });
    expectPdf(r);
    expect(pdfText(r.body)).toContain("P:nilnil0");
    expect(existsSync(marker)).toBe(false);
  });
  it("the environment is empty of secrets", async () => {
    process.env.TEXPOOL_TEST_SECRET = "s3cr3t";
    const r = await compile(s.url, { engine: "lualatex", source: lua('tex.print("E:"..tostring(os.getenv("TEXPOOL_TEST_SECRET")))') });
    expectPdf(r);
    expect(pdfText(r.body)).toContain("E:nil");
  });
});

describe("resource limits", () => {
  /** A runaway document: a 422, with one of `codes` when given. */
  async function stopped(engine: string, body: string, timeoutMs: number, codes?: string[]): Promise<Result> {
    const r = await compile(s.url, { engine, source: doc(body), timeoutMs });
    expect(r.status).toBe(422);
    if (codes) expect(codes).toContain(r.json.error.code);
    return r;
  }
  it("an infinite loop is stopped at the time limit", async () => {
    // the job's own limit, not the server's default (6 s); the wall-time bound is a hang guard that a
    // loaded machine meets (this file runs beside others)
    const t = Date.now();
    const r = await stopped("pdflatex", "\\def\\x{\\x}\\x", 2000, ["compile_timeout"]);
    expect(r.json.error.message).toContain("time limit of 2000 ms");
    expect(Date.now() - t).toBeLessThan(15_000);
  });
  it("exponential macro growth is stopped", async () => {
    await stopped("pdflatex", "\\def\\a{x}\\loop\\edef\\a{\\a\\a}\\iftrue\\repeat", 5000, ["compile_error", "compile_timeout"]);
  });
  it("lualatex memory growth is stopped", async () => {
    noLeak(await stopped("lualatex", '\\directlua{local t={} while true do t[#t+1]=string.rep("x",1e6)..#t end}', 8000));
  });
  it("an endless page flood is stopped", async () => {
    await stopped("pdflatex", "\\loop\\null\\newpage\\iftrue\\repeat", 4000, ["compile_timeout", "output_too_large"]);
  });
  it("a huge log is stopped and only its tail is returned", async () => {
    const r = await stopped("pdflatex", "\\loop\\message{\\space ZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZ}\\iftrue\\repeat", 5000, ["compile_timeout", "output_too_large"]);
    expect(Buffer.byteLength(r.json.error.log)).toBeLessThanOrEqual(s.config.limits.logTailBytes);
  });
});
