// Per-job uids (uids.ts): every running job has a uid of its own, never the server's and never
// another job's, so its processes, files and per-uid limits are out of every other job's reach; and
// the safe mode, in which those uids (with the caps) are what keeps jobs apart where the sandbox
// cannot run. Both need the server to run as root (setuid), as it does in the image and in CI.
import { spawn } from "node:child_process";
import { statSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { RunningServer } from "../src/server.ts";
import { leaseOwner, releaseOwner } from "../src/uids.ts";
import { compile, doc, expectPdf, findJobDir, pdfAllText, pdfText, testServer } from "./helpers.ts";

const BASE = 200_000;
const COUNT = 65_536;
const inRange = (uid: number) => uid >= BASE && uid < BASE + COUNT;


/** A job that runs until its deadline, with a file that marks its folder. */
const looping = (engine: string, marker: string, content = "x") => ({ engine, source: doc("\\def\\x{\\x}\\x"), files: [{ path: marker, content }], timeoutMs: 6_000 });

describe("with the sandbox", () => {
  let s: RunningServer;
  beforeAll(async () => {
    expect(process.getuid!()).toBe(0); // per-job uids need root
    s = await testServer({ poolSize: { pdflatex: 2, xelatex: 0, lualatex: 0 } });
  }, 120_000);
  afterAll(async () => {
    await s?.close();
  });

  it("two running jobs never share a uid, and neither is root or the server's", async () => {
    const a = compile(s.url, looping("pdflatex", "uid-a.tex"));
    const b = compile(s.url, looping("pdflatex", "uid-b.tex"));
    const [da, db] = await Promise.all([findJobDir(s, "uid-a.tex", 15_000), findJobDir(s, "uid-b.tex", 15_000)]);
    const [ua, ub] = [statSync(da), statSync(db)];
    expect(inRange(ua.uid) && inRange(ub.uid)).toBe(true);
    expect(ua.uid).not.toBe(ub.uid);
    expect(ua.mode & 0o777).toBe(0o700); // nobody else may even look in
    // each job's files are its own uid's (given just after they are written)
    await vi.waitFor(() => expect(statSync(path.join(da, "uid-a.tex")).uid).toBe(ua.uid), { timeout: 3000, interval: 20 });
    await vi.waitFor(() => expect(statSync(path.join(db, "uid-b.tex")).uid).toBe(ub.uid), { timeout: 3000, interval: 20 });
    expect((await a).json.error.code).toBe("compile_timeout");
    expect((await b).json.error.code).toBe("compile_timeout");
  }, 60_000);

  it("what a pass leaves is handed to the next pass's uid: the aux file is rewritten, references resolve", async () => {
    const source = doc("\\section{One}\\label{one}See \\ref{one} on page \\pageref{one}.\\newwrite\\w\\immediate\\openout\\w=note.txt\\immediate\\write\\w{pass}\\immediate\\closeout\\w");
    const r = await compile(s.url, { engine: "pdflatex", source });
    expectPdf(r);
    expect(Number(r.headers.get("x-compile-passes"))).toBeGreaterThanOrEqual(2);
    expect(pdfText(r.body)).toMatch(/See 1 on page 1/);
  }, 60_000);

  it("also in the main file's folder, which the next pass's engine made before the files were moved in", async () => {
    const source = doc("\\section{One}\\label{one}Deep \\ref{one}.");
    const r = await compile(s.url, { engine: "pdflatex", source, mainPath: "chapters/one/paper.tex" });
    expectPdf(r);
    expect(Number(r.headers.get("x-compile-passes"))).toBeGreaterThanOrEqual(2);
    expect(pdfText(r.body)).toMatch(/Deep 1\./);
  }, 60_000);

  it("/healthz says jobs have uids of their own", async () => {
    const h = await (await fetch(`${s.url}/healthz`)).json();
    expect(h.isolation).toMatchObject({ sandbox: "bwrap", uids: "per-job" });
  });
});

describe("leases", () => {
  it("a released uid's leftover processes are killed when nothing else would end them", async () => {
    const dir = `/tmp/uid-lease-${process.pid}`;
    const owner = leaseOwner({ base: BASE, count: COUNT }, dir, true)!;
    expect(inRange(owner.uid)).toBe(true);
    const child = spawn("/bin/sleep", ["60"], { uid: owner.uid, gid: owner.gid, detached: true, stdio: "ignore" });
    const exited = new Promise<NodeJS.Signals | null>((r) => child.once("exit", (_c, sig) => r(sig)));
    await new Promise((r) => child.once("spawn", r));
    await releaseOwner(dir);
    expect(await exited).toBe("SIGKILL");
    // and the uid is free again: a new lease for the same folder may take it
    expect(leaseOwner({ base: owner.uid, count: 1 }, `${dir}-again`, false)?.uid).toBe(owner.uid);
    await releaseOwner(`${dir}-again`);
  });
});

describe("safe mode (no user namespaces)", () => {
  let s: RunningServer;
  let warned = "";
  beforeAll(async () => {
    const warn = vi.spyOn(console, "warn").mockImplementation((...a: unknown[]) => void (warned += a.join(" ")));
    try {
      // a bwrap that cannot run stands for a runtime that refuses user namespaces
      s = await testServer({ bwrapPath: "/nonexistent/bwrap", poolSize: { pdflatex: 2, xelatex: 1, lualatex: 1 } });
    } finally {
      warn.mockRestore();
    }
  }, 120_000);
  afterAll(async () => {
    await s?.close();
  });

  it("the server starts instead of refusing, says so loudly and in /healthz, with shell escape and preambles off", async () => {
    expect(warned).toMatch(/SAFE MODE/);
    expect(s.config).toMatchObject({ sandbox: false, safeMode: true });
    expect(s.config.preamble.maxEntries).toBe(0);
    const h = await (await fetch(`${s.url}/healthz`)).json();
    expect(h.isolation).toMatchObject({ sandbox: "safe-mode", uids: "per-job", shellEscape: false });
    const r = await compile(s.url, { engine: "pdflatex", shellEscape: true, source: doc("x") });
    expect(r.status).toBe(400);
    expect(JSON.stringify(r.json.error)).toMatch(/shellEscape/);
  });

  for (const engine of ["pdflatex", "xelatex", "lualatex"]) {
    it(`${engine} compiles, across passes`, async () => {
      const r = await compile(s.url, { engine, source: doc("\\section{A}\\label{a}Safe \\ref{a}.") });
      expectPdf(r);
      expect(pdfText(r.body)).toMatch(/Safe 1\./);
    }, 60_000);
  }

  it("a job cannot read another running job's files by their host path", async () => {
    const secret = "SECRET-OF-ACCOUNT-A";
    const a = compile(s.url, { ...looping("pdflatex", "secret-a.tex", secret), namespace: "a" });
    const fileA = path.join(await findJobDir(s, "secret-a.tex", 15_000), "secret-a.tex");
    const attacks = [
      // xdvipdfmx opens what a \special names, wherever it is: only the file's permissions stop it
      { engine: "xelatex", source: doc(`\\special{pdf:fstream @x (${fileA})}\\special{pdf:put @resources <</XS @x>>}x`) },
      { engine: "lualatex", source: doc(`\\directlua{local f=io.open("${fileA}") tex.print(f and ("LEAK "..f:read("a")) or "BLOCKED")}`) },
      { engine: "pdflatex", source: doc(`\\input{${fileA}}`) },
    ];
    for (const attack of attacks) {
      const r = await compile(s.url, { ...attack, namespace: "b" });
      const seen = r.status === 200 ? pdfAllText(r.body) : r.body.toString();
      expect(seen, attack.engine).not.toContain(secret);
    }
    expect((await a).json.error.code).toBe("compile_timeout");
  }, 90_000);
});
