// Caps per job in all (cgroup.ts): one job's processes and memory, whatever programs it starts,
// and never counted against another account's job. Runs where the kernel lets the server make
// control groups (as root here, and in CI); /healthz says which isolation is in force.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningServer } from "../src/server.ts";
import { compile, pdfText, testServer } from "./helpers.ts";

let s: RunningServer;
const PROCESSES = 64;
const MEMORY = 256 * 1024 * 1024;

beforeAll(async () => {
  s = await testServer({ poolSize: { pdflatex: 1, xelatex: 0, lualatex: 0 }, limits: { jobProcesses: PROCESSES, jobMemoryBytes: MEMORY, shellEscapeProcesses: PROCESSES } as never });
}, 120_000);

afterAll(async () => {
  await s?.close();
});

/** A shell-escape document that runs `cmd` (from the job's root) and prints what it wrote to out.txt. */
function running(cmd: string, timeoutMs = 20_000) {
  const source = ["\\documentclass{article}", "\\begin{document}", `\\immediate\\write18{cd /job && { ${cmd} ; } >/dev/null 2>&1}`, "RESULT[\\input{out.txt}]", "\\end{document}"].join("\n");
  return { engine: "pdflatex", shellEscape: true, source, timeoutMs, namespace: undefined as string | undefined };
}

describe("isolation in force", () => {
  it("/healthz names the per-job caps", async () => {
    const h = await (await fetch(`${s.url}/healthz`)).json();
    expect(h.isolation.sandbox).toBe("bwrap");
    expect(["v1", "v2"]).toContain(h.isolation.jobCaps.cgroup);
    expect(h.isolation.jobCaps.processes).toBe(PROCESSES);
    expect(h.isolation.jobCaps.memoryBytes).toBe(MEMORY);
  });
});

describe("processes per job", () => {
  it("a job cannot start more than its cap, and another account's job runs its programs meanwhile", async () => {
    // a's flood: the flooding shell adds a line to `started` for each process it has started (the
    // line is its own, written once the fork returned: a child's own line could still be unwritten
    // when TeX reads the file on a loaded machine), and dies at the first fork that fails; TeX then
    // reads them back
    const source = [
      "\\documentclass{article}",
      "\\begin{document}",
      "\\immediate\\write18{cd /job && ( i=0; while [ $i -lt 300 ]; do (exec sleep 4) & echo x >> started; i=$((i+1)); done ) >/dev/null 2>&1}",
      "RESULT[\\input{started}]",
      "\\end{document}",
    ].join("\n");
    const a = compile(s.url, { engine: "pdflatex", shellEscape: true, source, timeoutMs: 30_000, namespace: "flooder" });
    await new Promise((r) => setTimeout(r, 1500));
    const b = await compile(s.url, { ...running("echo bystander-ran > out.txt; (sleep 0.1) & (sleep 0.1) & wait"), namespace: "bystander" });
    expect(b.status).toBe(200);
    expect(pdfText(b.body)).toContain("bystander-ran");
    const ra = await a;
    expect(ra.status, ra.body.toString().slice(0, 600)).toBe(200);
    const seen = (/RESULT\[([x\s]*)\]/.exec(pdfText(ra.body))?.[1] ?? "").replace(/\s+/g, "").length;
    expect(seen).toBeGreaterThan(PROCESSES / 2);
    expect(seen).toBeLessThanOrEqual(PROCESSES);
  });
});

describe("memory per job", () => {
  it("processes that each stay under the per-process cap are stopped by the job's cap in all", async () => {
    // three processes of ~150 MB each: under RLIMIT_AS, over 256 MiB together
    const eat = `perl -e '$x = "a" x 150_000_000; sleep 3'`;
    const r = await compile(s.url, running(`(${eat}; echo $? > e1) & (${eat}; echo $? > e2) & (${eat}; echo $? > e3) & wait; cat e1 e2 e3 > out.txt`));
    expect(r.status, r.body.toString().slice(0, 600)).toBe(200);
    const codes = /RESULT\[([^\]]*)\]/.exec(pdfText(r.body).replace(/\s+/g, " "))?.[1]?.trim().split(" ") ?? [];
    expect(codes).toHaveLength(3);
    // at least one was killed (SIGKILL: 137) by the kernel for the job's memory
    expect(codes).toContain("137");
  });
});
