// What documents without shell escape can read beyond their own folder, where TeX's own rules
// let them: lualatex reads any path but dotfiles (openin_any=r: luaotfload opens TeX tree files
// by absolute path), and every engine may run kpsewhich (restricted shell escape). Both see only
// what the sandbox shows: the TeX installation and the job. Positive controls show that the same
// constructs do reach absolute paths of the TeX tree, so the negative checks can fail.
import { randomBytes } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SANDBOX_JOB_DIR } from "../src/sandbox.ts";
import type { RunningServer } from "../src/server.ts";
import { compile, doc, expectPdf, findJobDir, pdfAllText, pdfText, testServer, type Result } from "./helpers.ts";

const TAG = randomBytes(6).toString("hex");
const SECRET_HOST = `HOSTSECRET${TAG}`;
const SECRET_JOB = `JOBSECRET${TAG}`;
const SECRET_DIR = `/tmp/texsecret-reads-${process.pid}-${TAG}`;
const PASSWD = readFileSync("/etc/passwd", "utf8").split("\n")[0] ?? "root:x:0:0";
const UP = "../".repeat(12); // from any job directory up to /
/** A file every TeX tree has, by absolute path (as TeX sees it in the sandbox). */
const ARTICLE = "/usr/share/texlive/texmf-dist/tex/latex/base/article.cls";

let s: RunningServer;
/** A file of another job, which runs (loops) while this file's tests run; close() ends it. */
let fileA: string;
let jobA: Promise<unknown>;

function noLeak(r: Result): void {
  const text = r.status === 200 ? pdfAllText(r.body) : JSON.stringify(r.json);
  for (const secret of [SECRET_HOST, SECRET_JOB, PASSWD, "root:x:0"]) expect(text).not.toContain(secret);
}

beforeAll(async () => {
  s = await testServer({ maxConcurrent: 3, maxQueue: 20, maxQueuePerAccount: 20, poolSize: { pdflatex: 1, xelatex: 0, lualatex: 2 }, limits: { defaultTimeoutMs: 60_000, maxTimeoutMs: 600_000 } as never });
  // it waits without spending CPU (LuaTeX's os.sleep) until close() kills it
  jobA = compile(s.url, { engine: "lualatex", source: doc("\\directlua{os.sleep(600)}"), files: [{ path: "other-job.tex", content: SECRET_JOB }], timeoutMs: 600_000 }).catch(() => undefined);
  fileA = path.join(await findJobDir(s, "other-job.tex"), "other-job.tex");
  mkdirSync(SECRET_DIR, { mode: 0o755 });
  chmodSync(SECRET_DIR, 0o755);
  writeFileSync(path.join(SECRET_DIR, "secret.tex"), `${SECRET_HOST}\n`, { mode: 0o644 });
}, 120_000);
afterAll(async () => {
  rmSync(SECRET_DIR, { recursive: true, force: true });
  await s?.close(); // ends the other job
  await jobA;
});

/** The other job was still running while it was attacked. */
const otherJobRan = () => expect(existsSync(fileA)).toBe(true);

/** `\IfFileExists` of each path: "<tag>i FOUND" or "<tag>i ABSENT". */
function probes(tag: string, paths: string[]): string {
  return paths.map((p, i) => `${tag}${i} \\IfFileExists{${p}}{FOUND}{ABSENT}\\par`).join("\n");
}
/** No line breaks inside paths (texmf-dist's hyphen), so the page text has each on one line. */
const NOBREAK = "\\exhyphenpenalty=10000 \\hyphenpenalty=10000 \\raggedright\n";

describe("lualatex reads absolute paths (openin_any=r), yet only the TeX tree and its own job", () => {
  it("another job's file, a host file and the host's /etc are absent; the TeX tree is there (TeX and Lua)", async () => {
    const found = [ARTICLE, `${UP}${ARTICLE.slice(1)}`];
    const absent = [fileA, `${UP}${fileA.slice(1)}`, `${SECRET_DIR}/secret.tex`, `${UP}${SECRET_DIR.slice(1)}/secret.tex`, "/etc/passwd", `/proc/1/root${fileA}`, path.join(s.config.jobRoot, ".runtime", "sandbox.lua")];
    const lua = [fileA, `${SECRET_DIR}/secret.tex`, "/etc/passwd", "/proc/self/environ", "/proc/self/mountinfo"];
    const source = doc(
      `${NOBREAK}${probes("F", found)}\n${probes("A", absent)}\n` +
        `\\directlua{for _, p in ipairs({${lua.map((p) => `"${p}"`).join(",")}}) do local f = io.open(p) tex.print(f and ("LUALEAK " .. p) or "LUABLOCKED") end}`,
    );
    const r = await compile(s.url, { engine: "lualatex", source });
    expectPdf(r);
    const t = pdfText(r.body).replace(/\s+/g, " ");
    // the control: paranoid mode (openin_any=p) would refuse both
    for (let i = 0; i < found.length; i++) expect(t).toContain(`F${i} FOUND`);
    for (let i = 0; i < absent.length; i++) expect(t, absent[i]).toContain(`A${i} ABSENT`);
    expect(t).not.toContain("LEAK");
    expect(t.match(/LUABLOCKED/g)).toHaveLength(lua.length);
    noLeak(r);
    otherJobRan();
  });

  it("\\input of another job's file and a host file: not found (422), nothing leaks", async () => {
    for (const p of [fileA, `${SECRET_DIR}/secret.tex`, `${UP}${SECRET_DIR.slice(1)}/secret.tex`]) {
      const r = await compile(s.url, { engine: "lualatex", source: doc(`\\input{${p}}`) });
      expect(r.status, p).toBe(422);
      noLeak(r);
    }
    otherJobRan();
  });
});

/** `[Ki: output]` of each kpsewhich command line, through the restricted shell escape. */
function kpse(commands: string[]): string {
  return `${NOBREAK}\\makeatletter\n${commands.map((c, i) => `[K${i}: \\@@input|"kpsewhich ${c}" ]\\par`).join("\n")}\n\\makeatother`;
}

describe("kpsewhich in the restricted shell escape", () => {
  it("finds TeX tree files (the control), nothing of another job's folder, the host or the job root", async () => {
    const lines = [
      "article.cls",
      `-must-exist ${fileA}`,
      `-path=${path.dirname(path.dirname(fileA))}// ${path.basename(fileA)}`,
      `-must-exist ${SECRET_DIR}/secret.tex`,
      `-path=${SECRET_DIR} secret.tex`,
      `-path=/tmp// secret.tex`,
      "-must-exist /etc/passwd",
      `-path=${s.config.jobRoot}// other-job.tex`,
    ];
    for (const engine of ["pdflatex", "lualatex"] as const) {
      const r = await compile(s.url, { engine, source: doc(kpse(lines)) });
      expectPdf(r);
      const t = pdfText(r.body).replace(/\s+/g, " ");
      expect(t).toContain(`[K0: ${ARTICLE} ]`);
      for (let i = 1; i < lines.length; i++) expect(t, `${engine}: kpsewhich ${lines[i]}`).toContain(`[K${i}: ]`);
      noLeak(r);
    }
    otherJobRan();
  });

  it("cannot run METAFONT through -mktex (jobs never do; the command line overrides the environment's MKTEX*=0)", async () => {
    const mf = 'mode_setup; designsize:=10pt#; font_size 10pt#;\nbeginchar("A",5pt#,5pt#,0); fill unitsquare scaled 5pt; endchar; end.\n';
    const files = [{ path: "tpx.mf", content: mf }];
    const lines = ["-mktex=tfm -format=tfm tpx", "-mk=tfm -format=tfm tpx", "--mktex tfm -format=tfm tpx", "-mktex=pk -format=pk tpx", "-format=tfm tpx"];
    const r = await compile(s.url, { engine: "pdflatex", source: doc(kpse(lines)), files });
    expectPdf(r);
    const t = pdfText(r.body).replace(/\s+/g, " ");
    for (let i = 0; i < lines.length; i++) expect(t, `kpsewhich ${lines[i]}`).toContain(`[K${i}: ]`);
    expect(t).not.toMatch(/tpx\.(tfm|\d+pk)/);
    // its ordinary uses still work (hardwrap, which the tufte classes load, asks for a setting)
    const v = await compile(s.url, { engine: "pdflatex", source: doc(kpse(["-var-value=max_print_line", `-must-exist ${SANDBOX_JOB_DIR}/tpx.mf`])), files });
    expectPdf(v);
    expect(pdfText(v.body).replace(/\s+/g, " ")).toMatch(/\[K0: 10000 \].*\[K1: \/job\/tpx\.mf \]/);
  });
});
