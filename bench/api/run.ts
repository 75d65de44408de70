// Platform overhead: an authenticated, rate-limited route (GET /api/account, limit set high enough not
// to trip) against the unauthenticated GET /health on the same `npm run dev`.
// Floors: authenticated throughput >= 60 % of /health; adds <= 3 ms at p50.
// Usage: npm run bench:api   (BASE_URL=... and KEY=... to use a running server instead)
import autocannon from "autocannon";
import { startDev } from "../../test/e2e/harness.ts";
import { floor } from "../floors.ts";

const DURATION = Number(process.env.DURATION ?? 10);
// Throughput is measured under concurrency; added latency with one client, where it is not
// multiplied by queueing on a 2-core machine.
const CONNECTIONS = Number(process.env.CONNECTIONS ?? 10);

const dev = process.env.BASE_URL ? null : await startDev();
const baseUrl = process.env.BASE_URL ?? dev!.baseUrl;
const key = process.env.KEY ?? (await dev!.createKey("enterprise", ["--limit", "1000000"]));

async function measure(title: string, path: string, connections: number, headers: Record<string, string> = {}) {
  // Warm up (isolate, auth cache, Durable Object) before measuring.
  await autocannon({ url: baseUrl + path, headers, connections, duration: 2 });
  const r = await autocannon({ url: baseUrl + path, headers, connections, duration: DURATION });
  const bad = r.non2xx + r.errors + r.timeouts;
  return { title, connections, rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, total: r.requests.total, bad };
}

try {
  const auth = { Authorization: `Bearer ${key}` };
  // Interleaved so that a change in background load hits both routes alike.
  const healthT = await measure("GET /health (no auth)", "/health", CONNECTIONS);
  const authedT = await measure("GET /api/account (auth + rate limit)", "/api/account", CONNECTIONS, auth);
  const healthL = await measure("GET /health (no auth)", "/health", 1);
  const authedL = await measure("GET /api/account (auth + rate limit)", "/api/account", 1, auth);
  const rows = [healthT, authedT, healthL, authedL];
  console.log(`\n${DURATION} s per run, against ${baseUrl}\n`);
  console.log("| route | clients | req/s | p50 ms | p99 ms | requests | non-2xx/errors |");
  console.log("| --- | ---: | ---: | ---: | ---: | ---: | ---: |");
  for (const r of rows) console.log(`| ${r.title} | ${r.connections} | ${r.rps.toFixed(0)} | ${r.p50} | ${r.p99} | ${r.total} | ${r.bad} |`);
  const ratio = authedT.rps / healthT.rps;
  const added = authedL.p50 - healthL.p50;
  console.log();
  floor(`throughput ratio authed/health: ${(ratio * 100).toFixed(1)} % (floor >= 60 %)`, ratio >= 0.6);
  floor(`p50 added by auth + rate limit (1 client): ${added.toFixed(2)} ms (floor <= 3 ms)`, added <= 3);
} finally {
  await dev?.stop();
}
