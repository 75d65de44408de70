// Webhook pipeline benchmark against `npm run dev` with a local receiver.
// Cause = an inbound sandbox message (`POST /api/sessions/:id/sandbox/inbound`, docs/contracts.md §3), effect =
// its `message.received` delivery verified at the receiver. Runs:
//   1. a healthy receiver: p50/p95 from the cause (request sent) to the first delivery;
//   2. a receiver failing 30 % of first attempts at random: every event delivered, exactly once after
//      deduplication on `webhook-id`, all signatures valid.
//   3. a burst of THROTTLED_EVENTS to an endpoint with maxPerSecond THROTTLE_RATE: the rate the receiver saw.
// Floors: p50 under 1.5 s; zero lost; throttled: rate within 10 % of maxPerSecond, at most maxPerSecond + 10 %
// arrivals (every attempt) in any 1 s window, 0 lost, 0 duplicates.
// Usage: npm run bench:webhooks   (EVENTS=1000 CONCURRENCY=20 THROTTLED_EVENTS=5000 THROTTLE_RATE=10; ONLY=throttled)
import { writeFileSync } from "node:fs";
import { startDev } from "../../test/e2e/harness.ts";
import type { Received } from "../../test/support/receiver.ts";
import { startReceiverProcess } from "./receiver-process.ts";
import { observedRate } from "../../test/support/throttle-rate.ts";
import { floor } from "../floors.ts";

const EVENTS = Number(process.env.EVENTS ?? 1000);
const THROTTLED_EVENTS = Number(process.env.THROTTLED_EVENTS ?? 5000);
const THROTTLE_RATE = Number(process.env.THROTTLE_RATE ?? 10);
const ONLY = process.env.ONLY;
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 20);
const SETTLE_MS = Number(process.env.SETTLE_MS ?? 60_000);

// In a process of its own: arrivals are stamped by a receiver that nothing else here keeps busy.
const receiver = await startReceiverProcess();
const dev = process.env.BASE_URL ? null : await startDev();
const baseUrl = process.env.BASE_URL ?? dev!.baseUrl;
const key = process.env.KEY ?? (await dev!.createKey("enterprise", ["--limit", "1000000"]));

async function call(path: string, method = "GET", json?: unknown): Promise<Response> {
  const headers: Record<string, string> = { Authorization: `Bearer ${key}` };
  if (json !== undefined) headers["Content-Type"] = "application/json";
  return fetch(baseUrl + path, { method, headers, body: json === undefined ? undefined : JSON.stringify(json) });
}

async function must<T>(res: Promise<Response>, what: string): Promise<T> {
  const r = await res;
  if (!r.ok) throw new Error(`${what}: ${r.status} ${await r.text()}`);
  return (await r.json()) as T;
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;

async function run(label: string, failFirstRate: number, opts: { events?: number; maxPerSecond?: number } = {}) {
  const count = opts.events ?? EVENTS;
  const inbox = `bench${label}${Date.now()}`;
  const session = await must<{ id: string }>(call("/api/sessions", "POST", { name: `bench-${label}` }), "create session");
  const hook = await must<{ id: string; secret: string }>(
    call("/api/webhooks", "POST", { url: `${receiver.url}/in/${inbox}`, events: ["message.received"], sessionId: session.id, ...(opts.maxPerSecond ? { maxPerSecond: opts.maxPerSecond } : {}) }),
    "create webhook",
  );
  await fetch(`${receiver.url}/inbox/${inbox}`, { method: "PUT", body: JSON.stringify({ secrets: [hook.secret], failFirstRate }) });

  const sentAt = new Map<string, number>();
  let next = 0;
  const started = Date.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < count) {
        const token = `bench-${label}-${next++}`;
        sentAt.set(token, Date.now());
        await must(call(`/api/sessions/${session.id}/sandbox/inbound`, "POST", { from: `1555${String(next).padStart(7, "0")}@c.us`, text: token }), "inbound");
      }
    }),
  );
  const sendSeconds = (Date.now() - started) / 1000;

  // A throttled run takes its events / rate, then the usual settling time.
  const deadline = Date.now() + SETTLE_MS + (opts.maxPerSecond ? (count / opts.maxPerSecond) * 1000 : 0);
  // Each poll reads only what arrived since the last one.
  const received: Received[] = [];
  const poll = async () => {
    const r = await fetch(`${receiver.url}/inbox/${inbox}?after=${received.length}`);
    if (!r.ok) throw new Error(`receiver inbox: ${r.status}`);
    for (const item of (await r.json()) as Received[]) received.push(item);
  };
  const firstOk = new Map<string, number>();
  let seen = 0;
  for (;;) {
    await poll();
    for (; seen < received.length; seen++) {
      const r = received[seen]!;
      if (typeof r.answered === "number" && r.answered >= 200 && r.answered < 300) {
        const token = r.body.match(/bench-[a-z]+-\d+/)?.[0];
        if (token && !firstOk.has(token)) firstOk.set(token, r.receivedAt);
      }
    }
    if (firstOk.size >= count || Date.now() > deadline) break;
    await new Promise((r) => setTimeout(r, 500));
  }
  await new Promise((r) => setTimeout(r, 2000)); // let stray duplicates arrive before counting them
  await poll();

  // Every arrival (webhook-id, time) for a closer look: e.g. against the times the worker logged for its attempts.
  if (process.env.ARRIVALS_OUT) writeFileSync(`${process.env.ARRIVALS_OUT}.${label}.json`, JSON.stringify(received.map((r) => [r.webhookId, r.receivedAt])));
  if (process.env.TRACE) {
    const series = [...firstOk].map(([token, at]) => ({ n: Number(token.split("-").pop()), ms: at - sentAt.get(token)! })).sort((a, b) => a.n - b.n);
    const tenth = Math.ceil(series.length / 10);
    console.log(label, Array.from({ length: 10 }, (_, i) => series.slice(i * tenth, (i + 1) * tenth).map((x) => x.ms).sort((a, b) => a - b)[Math.floor(tenth / 2)]).join(" "));
  }
  const latencies = [...firstOk].map(([token, at]) => at - sentAt.get(token)!).sort((a, b) => a - b);
  const okIds = new Set(received.filter((r) => typeof r.answered === "number" && r.answered < 300).map((r) => r.webhookId));
  const okDeliveries = received.filter((r) => typeof r.answered === "number" && r.answered < 300).length;
  return {
    label,
    events: count,
    sendSeconds,
    delivered: firstOk.size,
    lost: count - firstOk.size,
    uniqueIds: okIds.size,
    duplicates: okDeliveries - okIds.size,
    failedFirst: received.filter((r) => r.answered === 500).length,
    unverified: received.filter((r) => !r.verified).length,
    rate: observedRate([...firstOk.values()]),
    /** Every arrival, duplicates and failed attempts too: what the receiver had to take per second. */
    arrivals: observedRate(received.map((r) => r.receivedAt)),
    p50: percentile(latencies, 50),
    p95: percentile(latencies, 95),
    max: latencies[latencies.length - 1] ?? NaN,
  };
}

try {
  if (ONLY !== "throttled") await runHealthyAndFlaky();
  if (!ONLY || ONLY === "throttled") await runThrottled();
} finally {
  await dev?.stop();
  await receiver.close();
}

async function runThrottled() {
  const r = await run("throttled", 0, { events: THROTTLED_EVENTS, maxPerSecond: THROTTLE_RATE });
  console.log(`\n${r.events} events (${CONCURRENCY} concurrent causes) to an endpoint with maxPerSecond ${THROTTLE_RATE}, against ${baseUrl}\n`);
  console.log("| maxPerSecond | events | causes sent in s | delivered | lost | duplicates | achieved /s | most in any 1 s | span s |");
  console.log("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
  console.log(`| ${THROTTLE_RATE} | ${r.events} | ${r.sendSeconds.toFixed(1)} | ${r.delivered} | ${r.lost} | ${r.duplicates} | ${r.rate.perSecond.toFixed(1)} | ${r.arrivals.maxInOneSecond} | ${(r.rate.spanMs / 1000).toFixed(1)} |`);
  console.log();
  floor(`throttled rate: ${r.rate.perSecond.toFixed(1)}/s (floor: within 10 % of ${THROTTLE_RATE})`, Math.abs(r.rate.perSecond - THROTTLE_RATE) <= THROTTLE_RATE * 0.1);
  const most = Math.floor(THROTTLE_RATE * 1.1);
  floor(`throttled most in any 1 s: ${r.arrivals.maxInOneSecond} (floor: <= ${most})`, r.arrivals.maxInOneSecond <= most);
  floor(`throttled lost: ${r.lost}, duplicates: ${r.duplicates}, unverified: ${r.unverified} (floor 0)`, r.lost === 0 && r.duplicates === 0 && r.unverified === 0);
}

async function runHealthyAndFlaky() {
  const healthy = await run("healthy", 0);
  const flaky = await run("flaky", 0.3);
  console.log(`\n${EVENTS} events per run, ${CONCURRENCY} concurrent causes, against ${baseUrl}\n`);
  console.log("| receiver | causes sent in s | delivered | lost | 2xx duplicates (same webhook-id) | first attempts failed | unverified | p50 ms | p95 ms | max ms |");
  console.log("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
  for (const r of [healthy, flaky]) {
    console.log(`| ${r.label} | ${r.sendSeconds.toFixed(1)} | ${r.delivered}/${r.events} | ${r.lost} | ${r.duplicates} | ${r.failedFirst} | ${r.unverified} | ${r.p50} | ${r.p95} | ${r.max} |`);
  }
  const pass50 = healthy.p50 < 1500;
  const zeroLost = healthy.lost === 0 && flaky.lost === 0 && healthy.unverified === 0 && flaky.unverified === 0;
  console.log();
  floor(`p50 cause -> receiver (healthy): ${healthy.p50} ms (floor < 1500 ms)`, pass50);
  floor(`lost events (both runs, after dedup on webhook-id): ${healthy.lost + flaky.lost} (floor 0)`, zeroLost);
}
