// Entry point: `node container/src/server.ts` starts the compile server;
// `startServer()` starts it in-process (tests, benchmark).
import { promises as fs } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { loadConfig, withIsolation, type Config } from "./config.ts";
import { BodyParser } from "./body.ts";
import { createHandler } from "./http.ts";
import { checkSandbox, engineEnv } from "./engine.ts";
import { fontMaps } from "./driver.ts";
import { RuntimeFilesUnreachable, stageRuntimeFiles } from "./sandbox.ts";
import { FontMaker, prepareFontCache } from "./mf.ts";
import { Gate, LoopLagMonitor } from "./limits.ts";
import { compileWithFormat, writeInputs } from "./job.ts";
import { Pools } from "./pool.ts";
import { jobsDir } from "./workdir.ts";
import { Fairness } from "./fairness.ts";
import { EnvironmentInfo } from "./environment.ts";
import { useTexRoot } from "./texroot.ts";
import { Preambles } from "./preamble.ts";
import { JobRegistry } from "./job-control.ts";
import { detectCgroups, type Cgroups } from "./cgroup.ts";

// libuv runs file system work on a pool of threads (4 by default), shared by every job: one
// account's large files (reads, writes, removal of a job directory) must not queue another's
// small ones. Read when the pool first starts, so set before any asynchronous file access.
process.env.UV_THREADPOOL_SIZE ??= "16";

const REFILL_GRACE_MS = 30;

/** What the kernel allows is the same for every server of this process: found once. */
let cgroupsOnce: Promise<Cgroups> | undefined;
function sharedCgroups(): Promise<Cgroups> {
  cgroupsOnce ??= detectCgroups(`texpool-${process.pid}`);
  return cgroupsOnce;
}
/** On shutdown, how long killed jobs get to send their 503 before connections are cut. */
const DRAIN_MS = 300;
/** `node container/src/server.ts` exits this soon after SIGTERM/SIGINT, whatever is still running. */
export const EXIT_DEADLINE_MS = 1_500;

export interface RunningServer {
  url: string;
  port: number;
  config: Config;
  pools: Pools;
  preambles: Preambles;
  /** Per-job control groups (undefined: COMPILE_CGROUPS=off). */
  cgroups: Cgroups | undefined;
  /** Async jobs that can be cancelled and followed (compiles sent with X-Job-Id). */
  jobs: JobRegistry;
  /** The compile slots (tests hold them to fill the server). */
  gate: Gate;
  /** Resolves once every pool is full; rejects (PoolNotReady) naming the engine that cannot start. */
  warm: Promise<void>;
  close(): Promise<void>;
}

export interface StartOptions extends Partial<Config> {
  env?: NodeJS.ProcessEnv;
  /** Wait until pools are warm before resolving (default true). */
  waitWarm?: boolean;
}

export async function startServer(opts: StartOptions = {}): Promise<RunningServer> {
  const { env, waitWarm = true, ...overrides } = opts;
  const parsed = loadConfig(env ?? process.env, overrides);
  await prepareJobRoot(parsed);
  useTexRoot(parsed.texRoot);
  const cfg = await verifySandbox(parsed);
  // without the sandbox engines run on the host: its own TeX, then, everywhere
  if (!cfg.sandbox) useTexRoot(undefined);
  await stageRuntimeFiles(cfg).catch(async (e: unknown) => {
    await fs.rm(cfg.jobRoot, { recursive: true, force: true }).catch(() => {});
    throw e;
  });
  await prepareFontCache(cfg);
  const cgroups = cfg.cgroups === "off" ? undefined : await sharedCgroups();
  // xelatex's driver reads the font maps once, now rather than during the first job
  if (cfg.engines.includes("xelatex")) void fontMaps(engineEnv(cfg.jobRoot));
  const gate = new Gate(cfg.maxConcurrent, cfg.maxQueue, cfg.queueTimeoutMs, cfg.maxQueuePerAccount);
  // Spare engines start when no job is running and the last answer has had time to reach the
  // caller: a format load is ~100 ms of CPU that would otherwise slow the response on its way out.
  // Jobs of heavy namespaces do not count: they run at low priority and take no warm engines.
  const fairness = new Fairness();
  const pools = new Pools(cfg, () => gate.busy(REFILL_GRACE_MS) && fairness.lightBusy(REFILL_GRACE_MS), fairness);
  const warm = pools.warmUp(cfg.warmTimeoutMs);
  warm.catch(() => {}); // reported by the caller: waitWarm below, or the main block
  const lag = new LoopLagMonitor();
  const shutdown = new AbortController();
  const body = new BodyParser(cfg.limits);
  // preambles are dumped and verified in the background, each in a compile slot of its account
  // that is free while no request waits, and without running bibtex, biber, makeindex...
  const preambles = new Preambles(cfg, (ns) => gate.tryAcquire(ns));
  preambles.setRunner({ writeInputs, compileWithFormat: (req, use) => compileWithFormat(req, use, cfg, shutdown.signal, { noTools: true }) });
  const jobs = new JobRegistry();
  const server = http.createServer(createHandler({ cfg, pools, gate, lag, body, shutdown: shutdown.signal, preambles, cgroups, jobs, fonts: new FontMaker(cfg), environment: new EnvironmentInfo(cfg.engines), ready: () => pools.isWarm() }));
  server.requestTimeout = cfg.limits.maxTimeoutMs + 60_000;
  server.headersTimeout = 30_000;
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(cfg.port, cfg.host, () => resolve());
  });
  const addr = server.address() as AddressInfo;
  const host = addr.family === "IPv6" ? `[${addr.address}]` : addr.address === "0.0.0.0" ? "127.0.0.1" : addr.address;
  let closing: Promise<void> | undefined;
  const running: RunningServer = {
    url: `http://${host}:${addr.port}`,
    port: addr.port,
    config: cfg,
    pools,
    preambles,
    cgroups,
    jobs,
    gate,
    warm,
    close() {
      closing ??= (async () => {
        // kill every running job (each answers 503 shutting_down), then stop listening
        shutdown.abort();
        fairness.continueAll();
        lag.stop();
        for (const until = Date.now() + DRAIN_MS; gate.stats().active > 0 && Date.now() < until; ) await new Promise((r) => setTimeout(r, 10));
        await new Promise<void>((r) => {
          server.close(() => r());
          server.closeAllConnections();
        });
        await preambles.close();
        await Promise.all([pools.close(), body.close()]);
        await fs.chmod(cfg.jobRoot, 0o700).catch(() => {});
        await fs.rm(cfg.jobRoot, { recursive: true, force: true }).catch(() => {});
      })();
      return closing;
    },
  };
  if (waitWarm) await warm.catch(async (e: unknown) => {
    await running.close();
    throw e;
  });
  return running;
}

export class SandboxUnavailable extends Error {}

/**
 * Which isolation the server runs with. The bubblewrap sandbox when it works; where it cannot
 * (no unprivileged user namespaces: some container runtimes refuse them) and jobs can have uids of
 * their own (the server runs as root), the safe mode, loudly; otherwise the server refuses to
 * start, unless the sandbox was turned off explicitly (COMPILE_SANDBOX=off, dev only).
 */
async function verifySandbox(cfg: Config): Promise<Config> {
  if (cfg.safeMode) {
    if (!cfg.uids) throw new SandboxUnavailable("COMPILE_SANDBOX=uids (safe mode) keeps jobs apart by per-job uids, which needs the server to run as root.");
    console.warn(safeModeWarning("COMPILE_SANDBOX=uids"));
    return cfg;
  }
  if (!cfg.sandbox) {
    console.warn(
      [
        "",
        "!!! WARNING: COMPILE_SANDBOX=off: TeX engines run WITHOUT the bubblewrap sandbox.",
        "!!! A document can then read any file the engine's uid can read into its PDF",
        "!!! (e.g. xelatex \\special{pdf:fstream ...}). Never run like this with untrusted input.",
        "",
      ].join("\n"),
    );
    return cfg;
  }
  const r = await checkSandbox(cfg);
  if (r.ok) return cfg;
  if (cfg.uids) {
    console.warn(safeModeWarning(`the sandbox does not work here (${r.reason})`));
    return withIsolation({ ...cfg, sandbox: false, safeMode: true, texRoot: undefined });
  }
  await fs.rm(cfg.jobRoot, { recursive: true, force: true }).catch(() => {});
  throw new SandboxUnavailable(
    `The TeX sandbox (bubblewrap) does not work, so the compile server will not start: ${r.reason}.\n` +
      `Engines run in bwrap with an unprivileged user namespace as uid ${process.getuid?.()}. Install bubblewrap ` +
      `(apt-get install bubblewrap, or npm run tex:ensure) and allow unprivileged user namespaces ` +
      `(sysctl kernel.unprivileged_userns_clone=1 / user.max_user_namespaces > 0; in Docker a seccomp ` +
      `profile that permits them), or run the server as root: it then falls back to the safe mode ` +
      `(per-job uids, shell escape off). To run without any isolation anyway (dev only, unsafe for ` +
      `untrusted documents), set COMPILE_SANDBOX=off.`,
  );
}

function safeModeWarning(why: string): string {
  return [
    "",
    `!!! WARNING: compile server in SAFE MODE: ${why}.`,
    "!!! Jobs run without the bubblewrap sandbox, each as its own uid, with their caps; shell escape",
    "!!! and precompiled preambles are off. Documents can read files every user may read on this host.",
    "",
  ].join("\n");
}

/**
 * JOB_ROOT and its `jobs` folder, the parent of all job directories. When engines run under
 * another uid, they are traversable but not listable for them (0711; 0311 when they share the
 * server's uid), so a job cannot enumerate the random names of other jobs' directories.
 */
async function prepareJobRoot(cfg: Config): Promise<void> {
  // same uid as the engines (non-root deployment): write+search only, no read
  const mode = cfg.uids ? 0o711 : 0o311;
  await fs.mkdir(cfg.jobRoot, { recursive: true, mode });
  await fs.chmod(cfg.jobRoot, mode);
  await fs.mkdir(jobsDir(cfg), { recursive: true, mode });
  await fs.chmod(jobsDir(cfg), mode);
}

const isMain = process.argv[1] && fileURLToPath(import.meta.url) === (await fs.realpath(process.argv[1]).catch(() => process.argv[1]));
if (isMain) {
  const s = await startServer({ waitWarm: false }).catch((e: unknown) => {
    console.error(e instanceof SandboxUnavailable || e instanceof RuntimeFilesUnreachable ? `compile server: ${e.message}` : e);
    process.exit(1);
  });
  console.log(`compile server listening on ${s.url} (engines: ${s.config.engines.join(", ")}, pool ${JSON.stringify(s.config.poolSize)}, concurrency ${s.config.maxConcurrent}, sandbox ${s.config.sandbox ? "bwrap" : s.config.safeMode ? "SAFE MODE" : "OFF"}, ${s.config.uids ? "per-job uids" : "engines as the server's uid"}, per-job caps ${s.cgroups?.mode ?? "off"}${s.cgroups?.reason ? ` (${s.cgroups.reason})` : ""})`);
  s.warm.then(
    () => console.log("engine pools warm"),
    (e: Error) => console.error(`compile server: ${e.message} (still retrying; GET /healthz shows the pools)`),
  );
  let stopping = false;
  const stop = (sig: NodeJS.Signals) => {
    if (stopping) process.exit(1); // a second signal: no more waiting
    stopping = true;
    console.log(`compile server: ${sig}, stopping`);
    // whatever close() still waits for, the process is gone within the deadline
    setTimeout(() => process.exit(1), EXIT_DEADLINE_MS).unref();
    s.close().then(() => process.exit(0), () => process.exit(1));
  };
  // a stopped (paused) process would outlive an exit that did not wait for close()
  process.on("exit", () => s.pools.fairness.continueAll());
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
}
