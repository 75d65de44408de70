// Messaging on the sandbox network against `npm run dev`:
//  1. POST /api/messages/send: p50/p99 of one client sending in a loop (the latency floor), then
//     requests/s, p50, p99 with CONNECTIONS concurrent clients (each request to its own chat).
//  2. A bulk send of 5,000 messages (5 requests of 1,000): time until all are `sent`, and `delivered`.
//  3. 1,000 inbound media messages of 100 KB (sandbox inbound by URL, served by this process): p50/p99
//     from the receipt (the POST) to the file being downloadable (GET /api/messages/{id}/media -> 302),
//     through the queue's fetch into R2.
// Floors: single send p50 < 15 ms; 5,000-message bulk fully `sent` within 60 s; inbound media p50 < 2 s.
// Usage: npm run bench:messaging   (BASE_URL=... and KEY=... to use a running server instead)
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import autocannon, { type Request as AcRequest } from "autocannon";
import { startDev } from "../../test/e2e/harness.ts";
import { floor } from "../floors.ts";

const DURATION = Number(process.env.DURATION ?? 10);
const CONNECTIONS = Number(process.env.CONNECTIONS ?? 10);
const BULK = Number(process.env.BULK ?? 5000);
const MEDIA = Number(process.env.MEDIA ?? 1000);
const MEDIA_BYTES = 100 * 1024;

const dev = process.env.BASE_URL ? null : await startDev();
const baseUrl = process.env.BASE_URL ?? dev!.baseUrl;
const key = process.env.KEY ?? (await dev!.createKey("enterprise", ["--limit", "1000000"]));
const headers = { Authorization: `Bearer ${key}`, "Content-Type": "application/json" };

async function post<T>(path: string, body: unknown): Promise<T> {
  const res = await fetch(baseUrl + path, { method: "POST", headers, body: JSON.stringify(body) });
  if (res.status >= 300) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

try {
  const session = await post<{ id: string }>("/api/sessions", { name: "bench" });
  let n = 0;
  const sendOpts = (connections: number) => ({
    url: `${baseUrl}/api/messages/send`,
    method: "POST" as const,
    headers,
    connections,
    requests: [
      {
        setupRequest: (req: AcRequest): AcRequest => ({ ...req, body: JSON.stringify({ sessionId: session.id, to: `+1415${String(1_000_000 + (n++ % 8_000_000))}`, text: "bench" }) }),
      },
    ],
  });
  const settle = () => new Promise((res) => setTimeout(res, 3000));
  // Reference under the same machine load: the cheapest route of the same server.
  await autocannon({ url: `${baseUrl}/health`, connections: 1, duration: 1 });
  const health = await autocannon({ url: `${baseUrl}/health`, connections: 1, duration: 3 });
  // Each send leaves background work (receipts, three events, their fan-out): warm up, then let it
  // drain before each measured run so runs do not pay for each other.
  await autocannon({ ...sendOpts(1), duration: 2 });
  await settle();
  const single = await autocannon({ ...sendOpts(1), duration: DURATION });
  await settle();
  const r = await autocannon({ ...sendOpts(CONNECTIONS), duration: DURATION });
  await settle();
  const bad = r.non2xx + r.errors + r.timeouts + single.non2xx + single.errors + single.timeouts;

  // Bulk: a fresh session so the single-send receipts do not compete.
  const bulkSession = await post<{ id: string }>("/api/sessions", { name: "bench bulk" });
  const start = Date.now();
  const batches: string[] = [];
  for (let i = 0; i < BULK; i += 1000) {
    const items = Array.from({ length: Math.min(1000, BULK - i) }, (_, j) => ({ to: `+1650${String(1_000_000 + i + j)}`, text: `bulk ${i + j}` }));
    batches.push((await post<{ batchId: string }>("/api/messages/send-bulk", { sessionId: bulkSession.id, messages: items })).batchId);
  }
  const acceptedMs = Date.now() - start;
  let sentMs = 0;
  let deliveredMs = 0;
  while (Date.now() - start < 180_000) {
    const progress = await Promise.all(
      batches.map(async (id) => (await (await fetch(`${baseUrl}/api/messages/batches/${id}`, { headers })).json()) as { total: number; pending: number; delivered: number; read: number; failed: number }),
    );
    const pending = progress.reduce((s, b) => s + b.pending, 0);
    const delivered = progress.reduce((s, b) => s + b.delivered + b.read, 0);
    if (!sentMs && pending === 0) sentMs = Date.now() - start;
    if (delivered === BULK) {
      deliveredMs = Date.now() - start;
      break;
    }
    await new Promise((res) => setTimeout(res, 250));
  }

  // Inbound media: the files come from a local server (a stand-in for the network's CDN).
  const file = Buffer.alloc(MEDIA_BYTES, 7);
  const files = createServer((_req, res) => {
    res.writeHead(200, { "content-type": "image/jpeg", "content-length": String(file.byteLength) });
    res.end(file);
  });
  await new Promise<void>((resolve) => files.listen(0, "127.0.0.1", resolve));
  const filesUrl = `http://127.0.0.1:${(files.address() as AddressInfo).port}`;
  const mediaSession = await post<{ id: string }>("/api/sessions", { name: "bench media" });
  const received = new Map<string, number>();
  const ready: number[] = [];
  const mediaStart = Date.now();
  let next = 0;
  let posted = 0;
  let lastId = "";
  const receive = async () => {
    for (let i = next++; i < MEDIA; i = next++) {
      const t0 = Date.now();
      const m = await post<{ id: string }>(`/api/sessions/${mediaSession.id}/sandbox/inbound`, { from: `+1651${String(1_000_000 + (i % 50))}`, type: "image", media: { url: `${filesUrl}/f/${i}` } });
      received.set(m.id, t0);
      lastId = m.id;
      posted++;
    }
  };
  // Polled by chat (50 senders): a message is downloadable once its media says `stored`, which is
  // when GET /api/messages/{id}/media answers the redirect (checked for one at the end).
  const poll = async () => {
    while ((posted < MEDIA || received.size > 0) && Date.now() - mediaStart < 180_000) {
      await Promise.all(
        Array.from({ length: 50 }, async (_, c) => {
          const res = await fetch(`${baseUrl}/api/messages/1651${1_000_000 + c}@c.us?sessionId=${mediaSession.id}&limit=100`, { headers });
          const page = (await res.json()) as { data: { id: string; media?: { status?: string } }[] };
          const now = Date.now();
          for (const m of page.data) {
            const t0 = received.get(m.id);
            if (t0 !== undefined && m.media?.status === "stored") {
              ready.push(now - t0);
              received.delete(m.id);
            }
          }
        }),
      );
      await new Promise((res) => setTimeout(res, 50));
    }
  };
  await Promise.all([...Array.from({ length: 10 }, receive), poll()]);
  files.close();
  const sample = await fetch(`${baseUrl}/api/messages/${lastId}/media`, { headers, redirect: "manual" });
  if (sample.status !== 302) throw new Error(`GET media of a stored message answered ${sample.status}`);
  ready.sort((a, b) => a - b);
  const pct = (p: number) => (ready.length ? ready[Math.min(ready.length - 1, Math.floor((p / 100) * ready.length))]! : NaN);
  const mediaP50 = pct(50);

  console.log(`\nsandbox network, ${DURATION} s per run, against ${baseUrl}\n`);
  console.log("| measure | value |");
  console.log("| --- | ---: |");
  console.log(`| reference: GET /health, 1 client: p50 / p99 ms | ${health.latency.p50} / ${health.latency.p99} |`);
  console.log(`| send, 1 client: req/s | ${single.requests.average.toFixed(0)} |`);
  console.log(`| send, 1 client: p50 / p99 ms | ${single.latency.p50} / ${single.latency.p99} |`);
  console.log(`| send, ${CONNECTIONS} clients: req/s | ${r.requests.average.toFixed(0)} |`);
  console.log(`| send, ${CONNECTIONS} clients: p50 / p99 ms | ${r.latency.p50} / ${r.latency.p99} |`);
  console.log(`| sends (non-2xx/errors) | ${single.requests.total + r.requests.total} (${bad}) |`);
  console.log(`| bulk ${BULK}: accepted (5 requests) ms | ${acceptedMs} |`);
  console.log(`| bulk ${BULK}: all sent ms | ${sentMs || "not reached"} |`);
  console.log(`| bulk ${BULK}: all delivered ms | ${deliveredMs || "not reached"} |`);
  console.log(`| inbound media ${MEDIA} x 100 KB: downloadable / received | ${ready.length} / ${MEDIA} |`);
  console.log(`| inbound media: receipt -> downloadable p50 / p99 ms | ${mediaP50} / ${pct(99)} |`);
  const p50ok = single.latency.p50 < 15;
  const bulkOk = sentMs > 0 && sentMs <= 60_000;
  console.log();
  floor(`single send p50 (1 client): ${single.latency.p50} ms (floor < 15 ms)`, p50ok);
  floor(`bulk ${BULK} all sent: ${sentMs ? (sentMs / 1000).toFixed(1) + " s" : "not reached"} (floor <= 60 s)`, bulkOk);
  const mediaOk = ready.length === MEDIA && mediaP50 < 2000;
  floor(`inbound media receipt -> downloadable p50: ${mediaP50} ms (floor < 2 s, all ${MEDIA} stored)`, mediaOk);
} finally {
  await dev?.stop();
}
