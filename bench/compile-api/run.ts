// Compile API overhead, against `npm run dev`: sync hello world through the Worker (cache MISS, made
// unique by a comment), the same from the result cache (HIT), and the compile server alone with the
// same documents, interleaved in one run so drift hits all three alike; then async submit -> succeeded.
// Floors: MISS p50 adds <= 15 ms over the compile server alone; HIT p50 < 10 ms; async
// submit -> succeeded p50 < 1.5 s. A 12-file project (chapters, a style file, 300 KB of binary data) as a
// zip and as JSON `files`, both cache MISS, interleaved: zip p50 <= 1.3x the JSON p50.
// Usage: npm run bench:compile-api   (ROUNDS=40 ASYNC_ROUNDS=15; BASE_URL + KEY + COMPILER_URL to use running servers)
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import http from "node:http";
import { join } from "node:path";
import { freePort, ROOT, startDev } from "../../test/e2e/harness.ts";
import { zipSync } from "fflate";
import { floor } from "../floors.ts";

const ROUNDS = Number(process.env.ROUNDS ?? 40);
const ASYNC_ROUNDS = Number(process.env.ASYNC_ROUNDS ?? 15);
const HELLO = "\\documentclass{article}\n\\begin{document}\nHello, world!\n\\end{document}\n";

async function startCompileServer(): Promise<{ url: string; stop(): void }> {
  const port = await freePort();
  const entry = process.env.COMPILE_SERVER_ENTRY ?? join(ROOT, "container/src/server.ts");
  const child = spawn(process.execPath, [entry], { env: { ...process.env, PORT: String(port), HOST: "127.0.0.1" }, stdio: "ignore" });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (Date.now() > deadline) throw new Error("compile server did not get warm");
    const ok = await fetch(`${url}/healthz`).then((r) => r.ok, () => false);
    if (ok) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  return { url, stop: () => child.kill("SIGTERM") };
}

const compiler = process.env.COMPILER_URL ? { url: process.env.COMPILER_URL, stop() {} } : await startCompileServer();
const dev = process.env.BASE_URL ? null : await startDev({ env: { COMPILER_URL: compiler.url } });
const baseUrl = process.env.BASE_URL ?? dev!.baseUrl;
const key = process.env.KEY ?? (await dev!.createKey("enterprise", ["--limit", "1000000"]));
const auth = { Authorization: `Bearer ${key}`, "Content-Type": "application/json" };

type Answer = { status: number; ok: boolean; header(name: string): string | undefined; body: Buffer };
/**
 * The measuring client: node:http over one kept-alive connection per server, read to the last byte.
 * (Node's fetch adds its own milliseconds and spreads requests over several sockets.)
 */
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
function send(url: string, init: { method?: string; headers?: Record<string, string>; body?: string | Uint8Array } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: init.method ?? "GET", headers: init.headers, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => {
        const status = res.statusCode ?? 0;
        resolve({ status, ok: status >= 200 && status < 300, header: (n) => res.headers[n.toLowerCase()] as string | undefined, body: Buffer.concat(chunks) });
      });
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(init.body);
  });
}

async function timed(fn: () => Promise<Answer>, expect: (r: Answer) => boolean): Promise<number> {
  const t0 = performance.now();
  const res = await fn();
  const ms = performance.now() - t0;
  if (!expect(res)) throw new Error(`unexpected answer ${res.status} ${res.header("x-cache")}`);
  return ms;
}

const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
};

const doc = (tag: string) => `% ${tag} ${crypto.randomUUID()}\n${HELLO}`;
const worker = (source: string) => send(`${baseUrl}/v1/compile/sync`, { method: "POST", headers: auth, body: JSON.stringify({ source }) });
const direct = (source: string) =>
  send(`${compiler.url}/compile`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ engine: "pdflatex", source, files: [], timeoutMs: 30000 }) });

/** A multi-file project: the main file (made unique), ten chapters, a style file and unused binary data. */
function project(tag: string): Record<string, Uint8Array> {
  const enc = new TextEncoder();
  const files: Record<string, Uint8Array> = {};
  const chapters = Array.from({ length: 10 }, (_, i) => `chapters/ch${i}`);
  files["main.tex"] = enc.encode(`% ${tag} ${crypto.randomUUID()}\n\\documentclass{report}\n\\usepackage{style}\n\\begin{document}\n${chapters.map((c) => `\\input{${c}}`).join("\n")}\n\\end{document}\n`);
  files["style.sty"] = enc.encode("\\newcommand{\\term}[1]{\\textbf{#1}}\n");
  for (const [i, c] of chapters.entries()) files[`${c}.tex`] = enc.encode(`\\chapter{Chapter ${i}}\n${"Some \\term{text} of the chapter. ".repeat(200)}\n`);
  files["data/measurements.bin"] = new Uint8Array(randomBytes(300 * 1024));
  return files;
}
const asJson = (p: Record<string, Uint8Array>) => {
  const dec = new TextDecoder();
  const files = Object.entries(p)
    .filter(([path]) => path !== "main.tex")
    .map(([path, bytes]) => (path.endsWith(".bin") ? { path, content: Buffer.from(bytes).toString("base64"), encoding: "base64" } : { path, content: dec.decode(bytes) }));
  return JSON.stringify({ source: dec.decode(p["main.tex"]), files });
};
const zipped = (body: Uint8Array) => send(`${baseUrl}/v1/compile/sync`, { method: "POST", headers: { ...auth, "Content-Type": "application/zip" }, body });
const jsonProject = (body: string) => send(`${baseUrl}/v1/compile/sync`, { method: "POST", headers: auth, body });
const missOk = (r: Answer) => r.ok && r.header("x-cache") === "MISS";

type Pools = Record<string, { target: number; ready: number; starting: number }>;
/**
 * Each compile makes the server start a replacement engine in the background (format load, ~100+ ms of
 * CPU on a 2-core machine). Every measurement starts once the pools are full again, so no sample pays
 * for the previous one's refill: each is "a request to a warm, idle system", what the floors are about.
 * The short pause after that lets the previous request's background work (its log line travelling
 * to wrangler, a cache write) finish too.
 */
async function settle(): Promise<void> {
  const deadline = Date.now() + 5000;
  while (Date.now() < deadline) {
    const h = JSON.parse((await send(`${compiler.url}/healthz`)).body.toString()) as { pools: Pools };
    if (Object.values(h.pools).every((p) => p.ready >= p.target && p.starting === 0)) break;
    await new Promise((r) => setTimeout(r, 10));
  }
  await new Promise((r) => setTimeout(r, 60));
}

try {
  const hitDoc = doc("hit");
  // Warm up: isolate, auth cache, rate-limit DO, engine pools, keep-alive connections.
  for (let i = 0; i < 5; i++) {
    await timed(() => worker(doc("warm")), (r) => r.ok);
    await timed(() => direct(doc("warm")), (r) => r.ok);
  }
  await timed(() => worker(hitDoc), (r) => r.ok);

  const health: number[] = [];
  const alone: number[] = [];
  const miss: number[] = [];
  const hit: number[] = [];
  const missCompile: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    await settle();
    health.push(await timed(() => send(`${baseUrl}/health`), (r) => r.ok));
    await settle();
    alone.push(await timed(() => direct(doc("alone")), (r) => r.ok));
    await settle();
    let serverMs = 0;
    miss.push(
      await timed(
        () => worker(doc("miss")),
        (r) => {
          serverMs = Number(r.header("x-compile-duration-ms"));
          return r.ok && r.header("x-cache") === "MISS";
        },
      ),
    );
    missCompile.push(serverMs);
    await settle();
    hit.push(await timed(() => worker(hitDoc), (r) => r.ok && r.header("x-cache") === "HIT"));
  }

  const projectJson: number[] = [];
  const projectZip: number[] = [];
  await timed(() => zipped(zipSync(project("warm"))), missOk);
  for (let i = 0; i < ROUNDS; i++) {
    const json = asJson(project("json"));
    await settle();
    projectJson.push(await timed(() => jsonProject(json), missOk));
    const zip = zipSync(project("zip"));
    await settle();
    projectZip.push(await timed(() => zipped(zip), missOk));
  }

  const asyncMs: number[] = [];
  for (let i = 0; i < ASYNC_ROUNDS; i++) {
    const t0 = performance.now();
    const res = await send(`${baseUrl}/v1/compile/async`, { method: "POST", headers: auth, body: JSON.stringify({ source: doc("async") }) });
    const { statusUrl } = JSON.parse(res.body.toString()) as { statusUrl: string };
    for (;;) {
      const job = JSON.parse((await send(`${baseUrl}${statusUrl}`, { headers: auth })).body.toString()) as { status: string };
      if (job.status === "succeeded") break;
      if (job.status === "failed") throw new Error("async job failed");
      await new Promise((r) => setTimeout(r, 20));
    }
    asyncMs.push(performance.now() - t0);
  }

  const row = (name: string, xs: number[]) => `| ${name} | ${xs.length} | ${quantile(xs, 0.5).toFixed(1)} | ${quantile(xs, 0.95).toFixed(1)} |`;
  console.log(`\nsequential requests against ${baseUrl} (compile server ${compiler.url})\n`);
  console.log("| measurement | n | p50 ms | p95 ms |");
  console.log("| --- | ---: | ---: | ---: |");
  console.log(row("GET /health (no auth, no work: the wrangler dev floor)", health));
  console.log(row("compile server alone (POST /compile)", alone));
  console.log(row("Worker sync, cache MISS", miss));
  console.log(row("  of which compile server's X-Compile-Duration-Ms", missCompile));
  console.log(row("Worker sync, cache HIT", hit));
  console.log(row("async submit -> succeeded (poll 20 ms)", asyncMs));
  console.log(row("12-file project as JSON files, cache MISS", projectJson));
  console.log(row("the same project as a zip, cache MISS", projectZip));
  const added = quantile(miss, 0.5) - quantile(alone, 0.5);
  const hitP50 = quantile(hit, 0.5);
  const asyncP50 = quantile(asyncMs, 0.5);
  console.log();
  floor(`MISS p50 added over the compile server alone: ${added.toFixed(1)} ms (floor <= 15 ms)`, added <= 15);
  floor(`HIT p50: ${hitP50.toFixed(1)} ms (floor < 10 ms)`, hitP50 < 10);
  floor(`async submit -> succeeded p50: ${asyncP50.toFixed(0)} ms (floor < 1500 ms)`, asyncP50 < 1500);
  const zipRatio = quantile(projectZip, 0.5) / quantile(projectJson, 0.5);
  floor(`zip project p50 / JSON project p50: ${zipRatio.toFixed(2)}x (floor <= 1.3x)`, zipRatio <= 1.3);
} finally {
  await dev?.stop();
  compiler.stop();
}
