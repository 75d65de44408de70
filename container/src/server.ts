// Entry point: `node container/src/server.ts` starts the compile server;
// `startServer()` starts it in-process (tests, benchmark).
import { promises as fs } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { loadConfig, type Config } from "./config.ts";
import { createHandler } from "./http.ts";
import { Gate } from "./limits.ts";
import { Pools } from "./pool.ts";

export interface RunningServer {
  url: string;
  port: number;
  config: Config;
  pools: Pools;
  /** Resolves once every pool has at least one warm process. */
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
  const cfg = loadConfig(env ?? process.env, overrides);
  await prepareJobRoot(cfg);
  const gate = new Gate(cfg.maxConcurrent, cfg.maxQueue, cfg.queueTimeoutMs);
  const pools = new Pools(cfg, () => gate.stats().active > 0);
  let warmed = false;
  const warm = pools.fillAll().then(() => {
    warmed = true;
  });
  const server = http.createServer(createHandler({ cfg, pools, gate, ready: () => warmed && pools.isWarm() }));
  server.requestTimeout = cfg.limits.maxTimeoutMs + 60_000;
  server.headersTimeout = 30_000;
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(cfg.port, cfg.host, () => resolve());
  });
  const addr = server.address() as AddressInfo;
  const host = addr.family === "IPv6" ? `[${addr.address}]` : addr.address === "0.0.0.0" ? "127.0.0.1" : addr.address;
  if (waitWarm) await warm;
  let closing: Promise<void> | undefined;
  return {
    url: `http://${host}:${addr.port}`,
    port: addr.port,
    config: cfg,
    pools,
    warm,
    close() {
      closing ??= (async () => {
        await new Promise<void>((r) => {
          server.close(() => r());
          server.closeAllConnections();
        });
        await pools.close();
        await fs.chmod(cfg.jobRoot, 0o700).catch(() => {});
        await fs.rm(cfg.jobRoot, { recursive: true, force: true }).catch(() => {});
      })();
      return closing;
    },
  };
}

/**
 * The parent of all job directories. When engines run under another uid, it is
 * traversable but not listable for them (0711; 0311 when they share the
 * server's uid), so a job cannot enumerate the
 * random names of other jobs' directories.
 */
async function prepareJobRoot(cfg: Config): Promise<void> {
  // same uid as the engines (non-root deployment): write+search only, no read
  const mode = cfg.engineUid !== undefined ? 0o711 : 0o311;
  await fs.mkdir(cfg.jobRoot, { recursive: true, mode });
  await fs.chmod(cfg.jobRoot, mode);
}

const isMain = process.argv[1] && fileURLToPath(import.meta.url) === (await fs.realpath(process.argv[1]).catch(() => process.argv[1]));
if (isMain) {
  const s = await startServer({ waitWarm: false });
  console.log(`compile server listening on ${s.url} (engines: ${s.config.engines.join(", ")}, pool ${JSON.stringify(s.config.poolSize)}, concurrency ${s.config.maxConcurrent})`);
  s.warm.then(() => console.log("engine pools warm"));
  const stop = () => {
    s.close().then(() => process.exit(0));
  };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
}
