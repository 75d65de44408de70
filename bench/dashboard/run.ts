// Bundle sizes of the browser console: a fresh production build, then each file's raw and gzipped size,
// split into what the first page loads (index.html's scripts and module preloads) and what loads later
// (the LaTeX playground: CodeMirror, PDF.js and its worker). Budget: first-page JS <= 200 KB gzipped.
// Usage: npm run bench:dashboard
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { gzipSync } from "node:zlib";
import { buildDashboard } from "../../scripts/dashboard-build.ts";

const BUDGET_KB = 200;
const root = resolve(import.meta.dirname, "../..");
const started = Date.now();
await buildDashboard({ force: true });
const buildMs = Date.now() - started;

const html = readFileSync(join(root, "public", "index.html"), "utf8");
const firstPage = new Set<string>();
for (const m of html.matchAll(/(?:src|href)="\/assets\/([^"]+)"/g)) firstPage.add(m[1]!);

const kb = (n: number) => (n / 1024).toFixed(1);
const rows = readdirSync(join(root, "public", "assets"))
  .map((f) => {
    const body = readFileSync(join(root, "public", "assets", f));
    return { f, raw: statSync(join(root, "public", "assets", f)).size, gz: gzipSync(body, { level: 9 }).length, first: firstPage.has(f) };
  })
  .sort((a, b) => Number(b.first) - Number(a.first) || b.gz - a.gz);

console.log(`Build: ${buildMs} ms\n`);
console.log("| file | loaded | raw KB | gzip KB |");
console.log("|---|---|---:|---:|");
for (const r of rows) console.log(`| ${r.f.replace(/-[A-Za-z0-9_-]{8}\./, ".")} | ${r.first ? "first page" : "lazy (LaTeX page)"} | ${kb(r.raw)} | ${kb(r.gz)} |`);
const js = rows.filter((r) => r.first && /\.m?js$/.test(r.f)).reduce((a, r) => a + r.gz, 0);
console.log(`\nFirst-page JavaScript: ${kb(js)} KB gzipped; budget ${BUDGET_KB} KB (${((js / 1024 / BUDGET_KB) * 100).toFixed(0)} % of it).`);
if (js / 1024 > BUDGET_KB) process.exit(1);
