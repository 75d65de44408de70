// The bubblewrap sandbox: no engine reads files outside its own job directory
// (host files, the server's files, a concurrently running job's files), killing the
// process group still kills everything in the sandbox, and the start-up self-check.
//
// The secrets are world-readable files in /tmp (readable by nobody too), so only the
// sandbox keeps them out. Every leak assertion looks at the page text (pdftotext),
// the raw PDF and every inflated stream (pdfAllText), and at the JSON error and log;
// positive controls show the same constructs do pull a file into the PDF when the
// file is the job's own, so the checks can fail.
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync, chmodSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { loadConfig } from "../src/config.ts";
import { checkSandbox } from "../src/engine.ts";
import { bwrapArgs, SANDBOX_JOB_DIR } from "../src/sandbox.ts";
import { texHostPath } from "../src/texroot.ts";
import { SandboxUnavailable, startServer, type RunningServer } from "../src/server.ts";
import { compile, doc, findJobDir, expectPdf, pdfAllText, pdfText, testServer, type Result } from "./helpers.ts";

const engines = ["pdflatex", "xelatex", "lualatex"] as const;
const TAG = randomBytes(6).toString("hex");
const SECRET_TXT = `SECRETTXT${TAG}`;
const SECRET_PDF = `SECRETPDF${TAG}`;
const SECRET_JOB = `SECRETJOB${TAG}`;
const SECRET_DIR = `/tmp/texsecret-${process.pid}-${TAG}`;
const PASSWD = readFileSync("/etc/passwd", "utf8").split("\n")[0] ?? "root:x:0:0";
const UP = "../".repeat(12); // from any job directory up to /

let s: RunningServer;
let secretPdf: Buffer;

/** Fails when any secret appears anywhere in the response. */
function noLeak(r: Result): void {
  const text = r.status === 200 ? pdfAllText(r.body) : JSON.stringify(r.json);
  for (const secret of [SECRET_TXT, SECRET_PDF, SECRET_JOB, PASSWD, "root:x:0"]) expect(text).not.toContain(secret);
}

beforeAll(async () => {
  s = await testServer({ maxConcurrent: 4, maxQueue: 20, maxQueuePerAccount: 20, poolSize: { pdflatex: 2, xelatex: 2, lualatex: 2 } });
  const made = await compile(s.url, { engine: "pdflatex", source: doc(SECRET_PDF) });
  expectPdf(made);
  secretPdf = made.body;
  mkdirSync(SECRET_DIR, { mode: 0o755 });
  chmodSync(SECRET_DIR, 0o755);
  writeFileSync(path.join(SECRET_DIR, "secret.txt"), `${SECRET_TXT}\n`, { mode: 0o644 });
  writeFileSync(path.join(SECRET_DIR, "secret.pdf"), secretPdf, { mode: 0o644 });
}, 120_000);
afterAll(async () => {
  rmSync(SECRET_DIR, { recursive: true, force: true });
  await s?.close();
});

describe("xelatex: xdvipdfmx cannot read host files", () => {
  it("positive control: \\special{pdf:fstream} of the job's own file is embedded (and found)", async () => {
    const r = await compile(s.url, { engine: "xelatex", source: doc("\\special{pdf:fstream @x (own.txt)}\\special{pdf:put @resources <</XS @x>>}x"), files: [{ path: "own.txt", content: SECRET_JOB }] });
    expectPdf(r);
    expect(pdfAllText(r.body)).toContain(SECRET_JOB);
  });
  for (const file of ["/etc/passwd", `${SECRET_DIR}/secret.txt`, `${UP}${SECRET_DIR.slice(1)}/secret.txt`]) {
    it(`\\special{pdf:fstream} of ${file.startsWith("../") ? "../…" + SECRET_DIR : file} leaks nothing`, async () => {
      const r = await compile(s.url, { engine: "xelatex", source: doc(`\\special{pdf:fstream @x (${file})}\\special{pdf:put @resources <</XS @x>>}x`) });
      noLeak(r);
    });
  }
});

describe("\\includegraphics and \\input outside the job", () => {
  for (const engine of engines) {
    it(`${engine}: positive control: the job's own copy of the PDF is included (and found)`, async () => {
      const r = await compile(s.url, { engine, source: doc("\\includegraphics{own.pdf}", "\\usepackage{graphicx}\n"), files: [{ path: "own.pdf", content: secretPdf.toString("base64"), encoding: "base64" }] });
      expectPdf(r);
      expect(pdfText(r.body)).toContain(SECRET_PDF);
    });
    it(`${engine}: \\includegraphics of an absolute and a ../ path leaks nothing`, async () => {
      for (const p of [`${SECRET_DIR}/secret.pdf`, `${UP}${SECRET_DIR.slice(1)}/secret.pdf`]) {
        const r = await compile(s.url, { engine, source: doc(`\\includegraphics{${p}}`, "\\usepackage{graphicx}\n") });
        expect(r.status).toBe(422); // not found inside the sandbox (or refused by openin_any)
        noLeak(r);
      }
    });
    it(`${engine}: \\input of /etc/passwd and of a world-readable file in /tmp leaks nothing`, async () => {
      for (const p of ["/etc/passwd", `${SECRET_DIR}/secret.txt`, `${UP}${SECRET_DIR.slice(1)}/secret.txt`]) {
        const r = await compile(s.url, { engine, source: doc(`\\input{${p}}`) });
        expect(r.status).toBe(422);
        noLeak(r);
      }
    });
  }
});


describe("another job's directory", () => {
  it("a concurrently running job's files cannot be read by any engine (exact host path, guessed paths)", async () => {
    // job A: holds a secret and loops; its time limit outlasts the attacks on any machine,
    // and it is killed once they are done
    const a = compile(s.url, { engine: "pdflatex", source: doc("\\def\\x{\\x}\\x"), files: [{ path: "secret-a.tex", content: SECRET_JOB }], timeoutMs: 30_000 });
    const dirA = await findJobDir(s, "secret-a.tex");
    const fileA = path.join(dirA, "secret-a.tex");
    const rel = `${UP}${fileA.slice(1)}`;
    const guesses = [fileA, rel, `${path.dirname(dirA)}/*/secret-a.tex`];
    const attacks = [
      ...guesses.map((p) => ({ engine: "pdflatex", source: doc(`\\input{${p}}`) })),
      ...guesses.map((p) => ({ engine: "xelatex", source: doc(`\\input{${p}}`) })),
      { engine: "xelatex", source: doc(`\\special{pdf:fstream @x (${fileA})}\\special{pdf:put @resources <</XS @x>>}x`) },
      { engine: "xelatex", source: doc(`\\special{pdf:fstream @x (${rel})}\\special{pdf:put @resources <</XS @x>>}x`) },
      { engine: "lualatex", source: doc(`\\input{${fileA}}`) },
      {
        engine: "lualatex",
        source: doc(`\\directlua{local f=io.open("${fileA}") tex.print(f and ("LEAK "..f:read("a")) or "BLOCKED") local g=io.open("${rel}") tex.print(g and ("LEAK "..g:read("a")) or "BLOCKED")}`),
      },
    ];
    const rs = await Promise.all(attacks.map((body) => compile(s.url, body)));
    rs.forEach((r) => noLeak(r));
    const lua = rs[rs.length - 1]!;
    expectPdf(lua);
    expect(pdfText(lua.body)).not.toContain("LEAK");
    expect(existsSync(fileA)).toBe(true); // A was still running while it was attacked
    for (const pid of sandboxPids(dirA)) process.kill(pid, "SIGKILL");
    const ra = await a;
    expect(ra.status).toBe(422);
  }, 90_000);
});

/** Pids of bwrap processes whose command line names `dir`, and all their descendants. */
function sandboxPids(dir: string): number[] {
  const procs = readdirSync("/proc").filter((p) => /^\d+$/.test(p));
  const parent = new Map<number, number>();
  const roots: number[] = [];
  for (const p of procs) {
    try {
      const stat = readFileSync(`/proc/${p}/stat`, "utf8");
      parent.set(Number(p), Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]));
      const cmd = readFileSync(`/proc/${p}/cmdline`, "utf8");
      if (cmd.includes("bwrap") && cmd.includes(`\0${dir}\0${SANDBOX_JOB_DIR}\0`)) roots.push(Number(p));
    } catch {
      /* gone */
    }
  }
  const out = new Set(roots);
  for (let grew = true; grew; ) {
    grew = false;
    for (const [pid, pp] of parent) if (out.has(pp) && !out.has(pid)) (out.add(pid), (grew = true));
  }
  return [...out];
}

const alive = (pid: number) => {
  try {
    return !/^\S+ \S+ Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8").replace(/\(.*\)/, "x"));
  } catch {
    return false;
  }
};

/** Engines run as a uid of the job range (ENGINE_UID_BASE, ENGINE_UIDS) when the server runs as root, else as the server's own; never root. */
const ROOT = process.getuid!() === 0;
const engineUid = (uid: number) => (ROOT ? uid >= 200_000 && uid < 200_000 + 65_536 : uid === process.getuid!());

describe("limits and process-group kill inside the sandbox", () => {
  for (const engine of ["pdflatex", "xelatex"] as const) {
    it(`${engine}: the deadline kills bwrap, the sandbox init and the engine`, async () => {
      const r0 = compile(s.url, { engine, source: doc("\\def\\x{\\x}\\x"), files: [{ path: "loop-marker.tex", content: "x" }], timeoutMs: 1500 });
      const dir = await findJobDir(s, "loop-marker.tex");
      let pids: number[] = [];
      for (let i = 0; i < 50 && pids.length < 3; i++) {
        pids = sandboxPids(dir);
        await new Promise((r) => setTimeout(r, 20));
      }
      expect(pids.length).toBeGreaterThanOrEqual(3); // bwrap, its pid-namespace init, the engine
      const uids = pids.map((p) => Number(/^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${p}/status`, "utf8"))?.[1]));
      expect(new Set(uids).size).toBe(1); // bwrap, its init and the engine: the job's one uid
      expect(uids.every(engineUid)).toBe(true); // never root, not even bwrap
      expect(statSync(dir).uid).toBe(uids[0]); // the job folder is that uid's
      const r = await r0;
      expect(r.json?.error?.code).toBe("compile_timeout");
      await vi.waitFor(() => expect(pids.filter(alive)).toEqual([]), { timeout: 2000, interval: 50 });
    });
  }
  it("RLIMIT_FSIZE still applies inside the sandbox (output_too_large)", async () => {
    const big = "\\newwrite\\w\\immediate\\openout\\w=big.txt \\def\\a{xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx}\\loop\\immediate\\write\\w{\\a\\a\\a\\a\\a\\a\\a\\a\\a\\a}\\iftrue\\repeat";
    const r = await compile(s.url, { engine: "pdflatex", source: doc(big), timeoutMs: 20_000 });
    expect(r.status).toBe(422);
    expect(r.json.error.code).toBe("output_too_large");
  });
});

describe("sandbox self-check", () => {
  it("passes here: runs as a non-root uid, sees no host files, only loopback", async () => {
    const r = await checkSandbox(s.config);
    expect(r).toMatchObject({ ok: true });
    expect(engineUid(r.uid!)).toBe(true);
  });
  it("bwrap arguments: unshare everything, no host /etc, /home, /root, job root or server code", () => {
    const args = bwrapArgs({ hostDir: "/tmp/jr/abc", env: { PATH: "/usr/bin" } });
    for (const a of ["--unshare-all", "--unshare-user", "--disable-userns", "--die-with-parent", "--new-session", "--clearenv"]) expect(args).toContain(a);
    const sources = args.flatMap((a, i) => (/^--(ro-)?bind(-try)?$/.test(a) ? [args[i + 1]] : []));
    // the TeX installation's /usr: the host's, or the TeX root filesystem's (texroot.ts)
    expect(sources).toContain(texHostPath("/usr"));
    expect(sources).toContain("/tmp/jr/abc");
    for (const bad of ["/", "/etc", "/home", "/root", "/tmp", "/tmp/jr", "/work", "/proc", "/sys"]) expect(sources).not.toContain(bad);
    expect(args.join(" ")).not.toMatch(/container\/src/);
  });
  it("fails with a reason when bwrap cannot run; without per-job uids the server then refuses to start", async () => {
    const bad = { bwrapPath: "/nonexistent/bwrap", jobRoot: `/tmp/texcompile-test-${TAG}`, uids: undefined };
    const cfg = loadConfig({}, { ...bad, engines: [] });
    mkdirSync(cfg.jobRoot, { recursive: true, mode: 0o711 });
    const r = await checkSandbox(cfg);
    rmSync(cfg.jobRoot, { recursive: true, force: true });
    expect(r.ok).toBe(false);
    expect(r.reason).toMatch(/bwrap/);
    const err = await startServer({ port: 0, host: "127.0.0.1", env: {}, ...bad, engines: [] }).then(
      (x) => (x.close(), undefined),
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(SandboxUnavailable);
    expect(String((err as Error).message)).toMatch(/COMPILE_SANDBOX=off/);
  });
  it("COMPILE_SANDBOX=off starts without it, with a loud warning", async () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    try {
      const x = await startServer({ port: 0, host: "127.0.0.1", env: { COMPILE_SANDBOX: "off" }, bwrapPath: "/nonexistent/bwrap", engines: [], jobRoot: `/tmp/texcompile-test2-${TAG}` });
      expect(x.config.sandbox).toBe(false);
      await x.close();
      expect(warn.mock.calls.flat().join(" ")).toMatch(/WITHOUT the bubblewrap sandbox/);
    } finally {
      warn.mockRestore();
    }
    expect(loadConfig({}).sandbox).toBe(true);
    expect(loadConfig({ COMPILE_SANDBOX: "on" }).sandbox).toBe(true);
    expect(() => loadConfig({ COMPILE_SANDBOX: "maybe" })).toThrow(/COMPILE_SANDBOX/);
  });
});
