// `npm run dev`: applies local D1 migrations, starts the TeX compile server natively on loopback and
// the Worker under `wrangler dev`, wired together. Ctrl-C (or SIGTERM) stops both: SIGTERM to each
// one's process group, SIGKILL to whatever is still alive STOP_GRACE_MS later.
//
// Environment (all optional): PORT (Worker, default 8787), COMPILE_PORT (compile server, default 8788),
// PERSIST_TO (local state directory, default .wrangler/state), SKIP_TEX_CHECK=1, SKIP_MIGRATIONS=1 (a
// restart on a state directory whose migrations are applied: a wrangler process per database saved), WORKER_MAIN (another entry
// module than wrangler.toml's main, e.g. bench/scale/worker.ts), COMPILER_URL (use a
// compile server that is already running instead of starting one), DEV_INSPECTOR_PORT (wrangler's
// inspector port, to profile the Worker with a devtools client).
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { stopGroups } from "./process-groups.ts";
import { wranglerArgs } from "./wrangler.ts";
import { applyAll } from "./shard-migrations.ts";
import { copyDocsAssets } from "./docs-assets.ts";
import { buildDashboard } from "./dashboard-build.ts";

const port = Number(process.env.PORT ?? 8787);
const compilePort = Number(process.env.COMPILE_PORT ?? 8788);
const persistTo = process.env.PERSIST_TO;
const persistArgs = persistTo ? ["--persist-to", persistTo] : [];
const children: ChildProcess[] = [];
let stopping = false;

function log(msg: string) {
  console.log(`[dev] ${msg}`);
}

/** The compile server exits within 2 s of SIGTERM; wrangler/workerd usually sooner. */
const STOP_GRACE_MS = 3000;

function stop(code = 0) {
  if (stopping) return;
  stopping = true;
  const groups = children.flatMap((c) => (c.pid ? [c.pid] : []));
  void stopGroups(groups, STOP_GRACE_MS).then((killed) => {
    if (killed.length) log(`killed process group(s) ${killed.join(", ")} still running ${STOP_GRACE_MS} ms after SIGTERM`);
    process.exit(code);
  });
}

process.on("SIGINT", () => stop(0));
process.on("SIGTERM", () => stop(0));

function start(name: string, cmd: string, args: string[], env: NodeJS.ProcessEnv = {}) {
  // Own process group, so stopping kills grandchildren (workerd, TeX engines) too.
  const child = spawn(cmd, args, { stdio: "inherit", detached: true, env: { ...process.env, ...env } });
  children.push(child);
  child.on("exit", (code, signal) => {
    if (!stopping) {
      log(`${name} exited (${signal ?? code}); stopping`);
      stop(code ?? 1);
    }
  });
  return child;
}

copyDocsAssets();
log(`browser console: ${await buildDashboard()}`);

const externalCompiler = process.env.COMPILER_URL;

if (!externalCompiler && process.env.SKIP_TEX_CHECK !== "1" && existsSync("scripts/ensure-tex.ts")) {
  const tex = spawnSync(process.execPath, ["scripts/ensure-tex.ts"], { stdio: "inherit" });
  if (tex.status !== 0) process.exit(tex.status ?? 1);
}

if (process.env.SKIP_MIGRATIONS === "1") log("SKIP_MIGRATIONS=1: local D1 migrations not applied");
else {
  log("applying local D1 migrations (the directory, then every shard of wrangler.toml)");
  await applyAll(["--local", ...persistArgs]);
}

if (!externalCompiler) {
  log(`starting the TeX compile server on http://127.0.0.1:${compilePort}`);
  start("compile server", process.execPath, ["container/src/server.ts"], { PORT: String(compilePort), HOST: "127.0.0.1" });
}

// Dev-only values: loopback webhooks allowed, the compile server by URL (no Docker), a throwaway
// signing secret for media URLs unless one is configured.
const vars = {
  COMPILER_URL: externalCompiler ?? `http://127.0.0.1:${compilePort}`,
  ALLOW_LOOPBACK_URLS: "1",
  SIGNING_SECRET: process.env.SIGNING_SECRET ?? randomBytes(32).toString("hex"),
};
// Any [vars] entry of wrangler.toml set in the environment overrides it (e.g. WEBHOOK_RETRY_SCHEDULE=1,2,3).
const declaredVars = [...readFileSync("wrangler.toml", "utf8").split("[vars]")[1]!.split(/\n\[/)[0]!.matchAll(/^([A-Z][A-Z0-9_]*)\s*=/gm)].map((m) => m[1]!);
for (const name of declaredVars) if (process.env[name] !== undefined && !(name in vars)) (vars as Record<string, string>)[name] = process.env[name]!;

// WORKER_MAIN: another entry module than wrangler.toml's `main` (bench/scale wraps the Worker to count D1 statements).
const [cmd, args] = wranglerArgs([
  "dev",
  ...(process.env.WORKER_MAIN ? [process.env.WORKER_MAIN] : []),
  "--port", String(port),
  "--ip", "127.0.0.1",
  "--show-interactive-dev-session=false",
  "--test-scheduled",
  ...(process.env.DEV_INSPECTOR_PORT ? ["--inspector-port", process.env.DEV_INSPECTOR_PORT] : []),
  ...persistArgs,
  ...Object.entries(vars).flatMap(([k, v]) => ["--var", `${k}:${v}`]),
]);
log(`starting the Worker on http://127.0.0.1:${port}`);
start("wrangler dev", cmd, args, { WRANGLER_SEND_METRICS: "false" });

// wrangler dev does not fire cron triggers; tick the every-minute cron ourselves (webhook retries,
// scheduled campaigns, housekeeping), as production would.
const CRON_MS = Number(process.env.DEV_CRON_INTERVAL_MS ?? 60_000);
setInterval(() => {
  fetch(`http://127.0.0.1:${port}/cdn-cgi/handler/scheduled?cron=${encodeURIComponent("* * * * *")}`).catch(() => {});
}, CRON_MS).unref();
