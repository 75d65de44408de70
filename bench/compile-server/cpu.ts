// Benchmark: CPU per compile (user + system, every process), the compile server against the bare
// engine in the same TeX installation with the same passes, in one run.
//   node bench/compile-server/cpu.ts            (via npm run bench:compile-cpu)
// The server's CPU of a job is everything its process tree used from a settled state (pools full,
// no dump running) to the next settled state: the request's parsing, the sandbox, the engines, the
// refill of the warm processes it took, the output's checks, the PDF driver, the clean-up. The
// bare engine's is the engine (and xelatex's driver) run from a shell in a fresh folder. Rows: hello
// world per engine, the medium document per engine, and the precompiled-preamble path (pdflatex):
// the first compile, the dump with its check (in the background), the compile from the format.
// Env: BENCH_N (samples per row, default 8), BENCH_ROWS (comma-separated: hello, medium, preamble),
// BENCH_ENGINES (comma-separated, default all three; the preamble rows are pdflatex's).
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { startServer } from "../../container/src/server.ts";
import type { Engine } from "../../container/src/config.ts";
import { resolveTexRoot, TEX_ROOT_BIN } from "../../container/src/texroot.ts";
import { cpuMeter } from "./cpu-meter.ts";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const FIX = path.join(HERE, "../../container/test/fixtures");
const hello = readFileSync(path.join(FIX, "hello.tex"), "utf8");
const medium = readFileSync(path.join(FIX, "medium.tex"), "utf8");
const N = Number(process.env.BENCH_N ?? 8);
const ROWS = new Set((process.env.BENCH_ROWS ?? "hello,medium,preamble").split(",").map((r) => r.trim()));
const engines = (process.env.BENCH_ENGINES ?? "pdflatex,xelatex,lualatex").split(",").map((e) => e.trim()) as Engine[];
/** Floors on server CPU / bare CPU (medians): what the server adds per compile stays small. */
const FLOORS = { hello: 1.6, medium: 1.5, preamble: 1.6, hit: 1.6 } as const;

// the bare engines are the server's TeX: the TeX root filesystem's wrappers first in PATH
const texRoot = resolveTexRoot(process.env);
if (texRoot) process.env.PATH = `${path.join(texRoot, TEX_ROOT_BIN)}:${process.env.PATH ?? "/usr/bin:/bin"}`;

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const meter = cpuMeter();
const treeCpuMs = () => meter.ms();
const server = await startServer({ port: 0, host: "127.0.0.1", env: { ...process.env, LOG_REQUESTS: "0" } });

/** Every pool full, no dump queued or running, job folders removed: nothing of the last job still runs. */
async function settle(): Promise<void> {
  for (let i = 0; i < 2000; i++) {
    await server.preambles.idle();
    const full = (["pdflatex", "xelatex", "lualatex"] as const).every((e) => {
      const s = server.pools.get(e)?.stats();
      return !s || (s.ready >= s.target && s.starting === 0);
    });
    if (full) break;
    await sleep(10);
  }
  await sleep(150);
}

interface Sent {
  cpu: number;
  passes: number;
  preamble: string | null;
}

/** CPU of the server's tree (this process's included: the client's share is a request and a read) over one compile. */
async function viaServer(body: Record<string, unknown>, settleAfter = true): Promise<Sent> {
  await settle();
  const before = treeCpuMs();
  const r = await fetch(`${server.url}/compile`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  const pdf = Buffer.from(await r.arrayBuffer());
  if (r.status !== 200 || pdf.subarray(0, 5).toString() !== "%PDF-") throw new Error(`${String(body.engine)}: ${r.status} ${pdf.toString().slice(0, 300)}`);
  if (settleAfter) await settle();
  return { cpu: treeCpuMs() - before, passes: Number(r.headers.get("x-compile-passes")), preamble: r.headers.get("x-compile-preamble") };
}

function run(cmd: string, args: string[], cwd: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const c = spawn(cmd, args, { cwd, stdio: "ignore" });
    c.on("error", reject);
    c.on("exit", (code) => (code === 0 ? resolve() : reject(new Error(`${cmd} ${args.join(" ")}: exit ${code}`))));
  });
}

/** CPU of `steps` run from a shell in a fresh folder holding main.tex. */
async function bare(source: string, steps: (dir: string) => Promise<void>): Promise<number> {
  const dir = mkdtempSync(path.join(os.tmpdir(), "bench-cpu-"));
  try {
    writeFileSync(path.join(dir, "main.tex"), source);
    await settle();
    const before = treeCpuMs();
    await steps(dir);
    return treeCpuMs() - before;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const passes = (engine: Engine, n: number, extra: string[] = []) => async (dir: string) => {
  for (let i = 0; i < n; i++) await run(engine, [...extra, "-interaction=batchmode", "main.tex"], dir);
};

interface Row {
  name: string;
  engine: Engine;
  passes: number;
  floor: number;
  server: number[];
  bare: number[];
}
const rows: Row[] = [];

async function compileRow(name: string, engine: Engine, source: string, floor: number): Promise<void> {
  const row: Row = { name, engine, passes: 0, floor, server: [], bare: [] };
  await viaServer({ engine, source }); // warm-up: page cache, font caches
  for (let i = 0; i < N; i++) {
    const s = await viaServer({ engine, source });
    row.passes = s.passes;
    row.server.push(s.cpu);
    row.bare.push(await bare(source, passes(engine, s.passes)));
  }
  rows.push(row);
  process.stderr.write(`${name}/${engine} done\n`);
}

for (const engine of engines) {
  if (ROWS.has("hello")) await compileRow("hello world", engine, hello, FLOORS.hello);
  if (ROWS.has("medium")) await compileRow("medium document", engine, medium, FLOORS.medium);
}

// The precompiled preamble (pdflatex): each sample a new account, so the first compile queues a
// dump; the server's "dump + check" is the background work until the preamble is ready (the dump,
// the compile from the format and the two texts compared, the process it keeps warm from the
// format), i.e. the first compile with what follows it less the same compile without an account;
// the bare counterpart is the dump and the document compiled from the format (as many passes).
if (ROWS.has("preamble")) {
  const engine: Engine = "pdflatex";
  const first: Row = { name: "preamble: first compile (miss)", engine, passes: 0, floor: FLOORS.preamble, server: [], bare: [] };
  const dump: Row = { name: "preamble: dump + check (background)", engine, passes: 0, floor: FLOORS.preamble, server: [], bare: [] };
  const hit: Row = { name: "preamble: compile from the format (hit)", engine, passes: 0, floor: FLOORS.hit, server: [], bare: [] };
  const edited = (i: number) => medium.replace("\\section{Equations}", `\\section{Equations, edit ${i}}`);
  const dumpArgs = ["-ini", "-jobname=main", "-interaction=batchmode", "&pdflatex", "mylatexformat.ltx", "main.tex"];
  for (let i = -1; i < N; i++) {
    const namespace = `bench-cpu-${process.pid}-${i}`;
    // the first compile's own share (its passes and the pool's refill) is the same document's
    // compile without an account; what the miss and its background work take beyond it is the dump's
    const plain = await viaServer({ engine, source: medium });
    const m = await viaServer({ engine, source: medium, namespace });
    if (m.preamble !== "miss") throw new Error(`preamble: expected a miss, got ${m.preamble}`);
    const background = m.cpu - plain.cpu;
    const h = await viaServer({ engine, source: edited(i), namespace });
    if (h.preamble !== "hit") throw new Error(`preamble: expected a hit, got ${h.preamble}`);
    if (i < 0) continue; // warm-up
    first.passes = m.passes;
    dump.passes = m.passes;
    hit.passes = h.passes;
    first.server.push(plain.cpu);
    dump.server.push(background);
    hit.server.push(h.cpu);
    first.bare.push(await bare(medium, passes(engine, m.passes)));
    // the bare dump and its check, then the edited document from that format
    const dir = mkdtempSync(path.join(os.tmpdir(), "bench-cpu-fmt-"));
    try {
      writeFileSync(path.join(dir, "main.tex"), medium);
      await settle();
      let t = treeCpuMs();
      await run(engine, dumpArgs, dir);
      await passes(engine, m.passes, ["-fmt=main"])(dir);
      dump.bare.push(treeCpuMs() - t);
      writeFileSync(path.join(dir, "main.tex"), edited(i));
      t = treeCpuMs();
      await passes(engine, h.passes, ["-fmt=main"])(dir);
      hit.bare.push(treeCpuMs() - t);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  rows.push(first, dump, hit);
  process.stderr.write("preamble done\n");
}
await settle();
const idleFrom = treeCpuMs();
await sleep(1000);
const idle = treeCpuMs() - idleFrom;
await server.close();
meter.close();

const f = (x: number) => x.toFixed(0);
console.log(`\nCPU per compile, compile server vs bare engine (${os.cpus().length} CPUs, ${os.cpus()[0]?.model ?? "?"}; n=${N}; ms of user+system CPU over every process, medians; load ${os.loadavg().map((l) => l.toFixed(2)).join(" ")}; the server idle: ${f(idle)} ms/s; measured by ${meter.kind === "cgroup" ? "a cpuacct cgroup" : "/proc (live tree; may undercount)"})\n`);
console.log("| case | engine | passes | server CPU | bare CPU | extra | ratio | floor | ok |");
console.log("| --- | --- | --- | --- | --- | --- | --- | --- | --- |");
let allOk = true;
for (const r of rows) {
  const s = median(r.server);
  const b = median(r.bare);
  const ratio = s / b;
  const ok = ratio <= r.floor;
  allOk &&= ok;
  console.log(`| ${r.name} | ${r.engine} | ${r.passes} | ${f(s)} | ${f(b)} | ${f(s - b)} | ${ratio.toFixed(2)}x | <= ${r.floor}x | ${ok ? "yes" : "NO"} |`);
}
console.log(`\n${allOk ? "All floors met." : "Some floors NOT met."}`);
process.exitCode = allOk ? 0 : 1;
