// Benchmark: the compile server (warm pool, through HTTP) against running the
// engine directly from the shell, on the same machine, in one run.
//   node bench/compile-server/run.ts            (via npm run bench:compile-server)
// Rows: hello world and the medium document (first compile: no precompiled preamble) per engine;
// a T1-encoded document (EC fonts) and an index + glossary document (pdflatex); the medium
// document compiled again with a changed body, from the account's precompiled preamble; a project of
// several files sent as a zip (see zip-project.ts).
// Env: BENCH_N (hello-world samples, default 20), BENCH_N_MEDIUM (other rows, default 5), BENCH_ROWS
// (comma-separated: hello, medium, t1, index, repeat, zip; default all).
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { startServer } from "../../container/src/server.ts";
import type { Engine } from "../../container/src/config.ts";
import { projectZip, zipCli, zipRequestBody } from "./zip-project.ts";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const FIX = path.join(HERE, "../../container/test/fixtures");
const hello = readFileSync(path.join(FIX, "hello.tex"), "utf8");
const medium = readFileSync(path.join(FIX, "medium.tex"), "utf8");
const t1 = readFileSync(path.join(HERE, "docs", "t1.tex"), "utf8");
const indexGlossary = readFileSync(path.join(HERE, "docs", "index-glossary.tex"), "utf8");
const N = Number(process.env.BENCH_N ?? 20);
const NM = Number(process.env.BENCH_N_MEDIUM ?? 5);
const engines: Engine[] = ["pdflatex", "xelatex", "lualatex"];
const ROWS = new Set((process.env.BENCH_ROWS ?? "hello,medium,t1,index,repeat,zip").split(",").map((r) => r.trim()));
/** Ratio floors (server p50 / CLI p50): hello stays fast; first compiles no slower than the bare engine; a repeat from the precompiled preamble at most half. */
const FLOORS = { hello: 0.3, first: 1.0, repeat: 0.5 } as const;

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))] ?? NaN;
}

function runCli(engine: Engine, dir: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const t = performance.now();
    const c = spawn(engine, ["-interaction=batchmode", "main.tex"], { cwd: dir, stdio: "ignore" });
    c.on("exit", (code) => (code === 0 ? resolve(performance.now() - t) : reject(new Error(`${engine} exit ${code}`))));
  });
}

/** Direct CLI: a fresh directory each time, the engine run `passes` times, as a user would from a shell. */
async function cli(engine: Engine, source: string, passes: number): Promise<number> {
  const dir = mkdtempSync(path.join(os.tmpdir(), "bench-cli-"));
  writeFileSync(path.join(dir, "main.tex"), source);
  let total = 0;
  for (let i = 0; i < passes; i++) total += await runCli(engine, dir);
  rmSync(dir, { recursive: true, force: true });
  return total;
}

const server = await startServer({ port: 0, host: "127.0.0.1", env: { ...process.env, LOG_REQUESTS: "0" } });

async function waitPoolFull(engine: Engine): Promise<void> {
  for (let i = 0; i < 400; i++) {
    const s = server.pools.get(engine)!.stats();
    if (s.ready >= s.target && s.starting === 0) return;
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** One compile through the server; `body` makes the request's JSON at the start of the timing (the zip row unpacks there). */
async function viaServer(engine: Engine, source: string, namespace?: string, body: () => string = () => JSON.stringify({ engine, source, ...(namespace ? { namespace } : {}) })): Promise<{ ms: number; passes: number; preamble: string | null; tools: string }> {
  await waitPoolFull(engine); // "warm pool": measure a request that finds ready processes
  const t = performance.now();
  const r = await fetch(`${server.url}/compile`, { method: "POST", headers: { "content-type": "application/json" }, body: body() });
  const pdf = Buffer.from(await r.arrayBuffer());
  const ms = performance.now() - t;
  if (r.status !== 200 || pdf.subarray(0, 5).toString() !== "%PDF-") throw new Error(`${engine}: ${r.status} ${pdf.toString().slice(0, 300)}`);
  return { ms, passes: Number(r.headers.get("x-compile-passes")), preamble: r.headers.get("x-compile-preamble"), tools: r.headers.get("x-compile-tools") ?? "" };
}

/** The medium document with its body changed (sample i), as an author edits between compiles. */
const editedMedium = (i: number) => medium.replace("\\section{Equations}", `\\section{Equations, edit ${i}}`);

interface Row {
  doc: string;
  engine: Engine;
  floor: number;
  passes: number;
  server: number[];
  cli: number[];
  note?: string;
}
const rows: Row[] = [];

async function measure(doc: string, engine: Engine, floor: number, n: number, source: (i: number) => string, namespace?: string): Promise<void> {
  const row: Row = { doc, engine, floor, passes: 0, server: [], cli: [] };
  const hits = new Set<string>();
  for (let i = 0; i < n; i++) {
    const src = source(i);
    const r = await viaServer(engine, src, namespace);
    hits.add(r.preamble ?? "none");
    row.passes = r.passes;
    row.server.push(r.ms);
    row.cli.push(await cli(engine, src, r.passes));
  }
  if (namespace) row.note = `preamble: ${[...hits].join("/")}`;
  rows.push(row);
  process.stderr.write(`${doc}/${engine} done\n`);
}

for (const engine of engines) {
  for (const [doc, src, n, floor] of [["hello", hello, N, FLOORS.hello], ["medium", medium, NM, FLOORS.first]] as const) {
    if (!ROWS.has(doc)) continue;
    await viaServer(engine, src); // warm-up (font caches, page cache)
    await cli(engine, src, 1);
    await measure(doc, engine, floor, n, () => src);
  }
}
for (const [row, doc, src] of [["t1", "T1 (EC fonts)", t1], ["index", "index + glossary", indexGlossary]] as const) {
  if (!ROWS.has(row)) continue;
  await viaServer("pdflatex", src);
  await cli("pdflatex", src, 1);
  await measure(doc, "pdflatex", FLOORS.first, NM, () => src);
}
// precompiled preambles are pdflatex's only (see container/src/preamble.ts)
for (const engine of ROWS.has("repeat") ? (["pdflatex"] as const) : []) {
  const ns = `bench-${engine}`;
  const first = await viaServer(engine, medium, ns); // the first compile; its preamble is dumped in the background
  if (first.preamble !== "miss") throw new Error(`medium repeat/${engine}: expected a preamble miss, got ${first.preamble}`);
  await server.preambles.idle();
  await cli(engine, editedMedium(-1), 1);
  await measure("medium repeat (body changed)", engine, FLOORS.repeat, NM, editedMedium, ns);
}
// The project as a zip: the Worker unpacks an archive body into the JSON request's files
// (src/compile/archive) and the compile server gets that JSON, so the server's time here starts with
// that same unpacking; the shell's with unzipping to a fresh folder, then the engine and BibTeX as often
// as the server ran them.
if (ROWS.has("zip")) {
  const zip = projectZip();
  const engine: Engine = "pdflatex";
  const warm = await viaServer(engine, "", undefined, () => zipRequestBody(engine, zip));
  await zipCli(engine, zip, warm.passes, warm.tools);
  const row: Row = { doc: `project as zip (${Math.round(zip.byteLength / 1024)} KiB, chapters, .sty, BibTeX, TikZ, PNG)`, engine, floor: FLOORS.first, passes: warm.passes, server: [], cli: [], note: `tools: ${warm.tools || "none"}` };
  for (let i = 0; i < NM; i++) {
    const r = await viaServer(engine, "", undefined, () => zipRequestBody(engine, zip));
    row.server.push(r.ms);
    row.cli.push(await zipCli(engine, zip, r.passes, r.tools));
  }
  rows.push(row);
  process.stderr.write("zip project done\n");
}
await server.close();

const f = (x: number) => x.toFixed(0);
console.log(`\nCompile server vs direct CLI (${os.cpus().length} CPUs, ${os.cpus()[0]?.model ?? "?"}; hello n=${N}, medium n=${NM}; times in ms, server = HTTP round trip with a warm pool, CLI = engine run from a fresh dir as many passes as the server needed)\n`);
console.log("| document | engine | passes | server p50 | server p95 | CLI p50 | CLI p95 | p50 ratio | floor | ok |");
console.log("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |");
let allOk = true;
for (const r of rows) {
  const ratio = pct(r.server, 50) / pct(r.cli, 50);
  const ok = ratio <= r.floor;
  allOk &&= ok;
  const doc = r.note ? `${r.doc} (${r.note})` : r.doc;
  console.log(`| ${doc} | ${r.engine} | ${r.passes} | ${f(pct(r.server, 50))} | ${f(pct(r.server, 95))} | ${f(pct(r.cli, 50))} | ${f(pct(r.cli, 95))} | ${ratio.toFixed(2)}x | <= ${r.floor}x | ${ok ? "yes" : "NO"} |`);
}
console.log(`\n${allOk ? "All floors met." : "Some floors NOT met."}`);
process.exitCode = allOk ? 0 : 1;
