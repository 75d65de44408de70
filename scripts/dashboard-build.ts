// Builds the browser console (dashboard/, Vite) into the Worker's static assets: public/index.html and
// public/assets/ (neither committed). Run by `npm run dev`, `npm run deploy` and the Workers test
// config (so `npm test` serves it too). Skipped when nothing it is built from changed since the last
// build: a fingerprint of the sources and the lockfile is kept in node_modules/.cache.
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const OUT_HTML = join(root, "public", "index.html");
const OUT_DIR = join(root, "public", "assets");
// Outside public/, so it is never served.
const STAMP = join(root, "node_modules", ".cache", "dashboard-build.fingerprint");
/** What the bundle is made of: its own folder, the typed client and the shared campaign template code. */
const INPUTS = ["dashboard", "client/index.ts", "client/schema.d.ts", "src/messaging/campaigns/template.ts", "package-lock.json"];

function files(path: string): string[] {
  const full = join(root, path);
  if (!existsSync(full)) return [];
  if (!statSync(full).isDirectory()) return [path];
  return readdirSync(full, { withFileTypes: true })
    .filter((e) => e.name !== "node_modules")
    .flatMap((e) => files(join(path, e.name)))
    .sort();
}

function fingerprint(): string {
  const h = createHash("sha256");
  for (const f of INPUTS.flatMap(files)) h.update(f).update("\0").update(readFileSync(join(root, f))).update("\0");
  return h.digest("hex");
}

export async function buildDashboard(opts: { force?: boolean } = {}): Promise<"built" | "up to date"> {
  const fp = fingerprint();
  if (!opts.force && existsSync(OUT_HTML) && existsSync(STAMP) && readFileSync(STAMP, "utf8") === fp) return "up to date";
  rmSync(OUT_DIR, { recursive: true, force: true });
  rmSync(OUT_HTML, { force: true });
  const { build } = await import("vite");
  await build({ configFile: join(root, "dashboard", "vite.config.ts"), logLevel: "warn" });
  mkdirSync(dirname(STAMP), { recursive: true });
  writeFileSync(STAMP, fp);
  return "built";
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const started = Date.now();
  const r = await buildDashboard({ force: process.argv.includes("--force") });
  console.log(`[dashboard] ${r} (${Date.now() - started} ms)`);
}
