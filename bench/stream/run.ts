// Live event stream latency against `npm run dev`: cause (POST /api/sessions/:id/sandbox/inbound) to
// client-side receipt of its `message.received` envelope on GET /api/events/stream, with 1 and 50
// sockets of one account open (each opened with its own single-use ticket, as a browser would).
// Rounds run one after another; every socket's receipt of every round is one sample.
// Floor: p50 < 300 ms locally.
// Usage: npm run bench:stream   (ROUNDS=..., BASE_URL=... and KEY=... to use a running server instead)
import { startDev } from "../../test/e2e/harness.ts";

const ROUNDS = Number(process.env.ROUNDS ?? 40);
const SOCKETS = [1, 50];
const FLOOR_P50_MS = 300;

const dev = process.env.BASE_URL ? null : await startDev();
const baseUrl = process.env.BASE_URL ?? dev!.baseUrl;
const key = process.env.KEY ?? (await dev!.createKey("enterprise", ["--limit", "1000000"]));
const headers = { Authorization: `Bearer ${key}`, "Content-Type": "application/json" };

async function post<T>(path: string, body?: unknown): Promise<T> {
  const res = await fetch(baseUrl + path, { method: "POST", headers, body: body === undefined ? undefined : JSON.stringify(body) });
  if (res.status >= 300) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;

async function openSockets(n: number, sessionId: string): Promise<{ sockets: WebSocket[]; waitFor(text: string): Promise<number[]> }> {
  const listeners = new Map<string, { left: number; times: number[]; done: (t: number[]) => void }>();
  const sockets: WebSocket[] = [];
  for (let i = 0; i < n; i++) {
    const { ticket } = await post<{ ticket: string }>("/api/events/stream/tickets");
    const ws = new WebSocket(`${baseUrl.replace(/^http/, "ws")}/api/events/stream?ticket=${ticket}&types=message.received&sessionId=${sessionId}`);
    await new Promise<void>((resolve, reject) => {
      ws.onopen = () => resolve();
      ws.onerror = () => reject(new Error("socket failed to open"));
    });
    ws.onmessage = (m) => {
      const at = performance.now();
      const e = JSON.parse(String(m.data)) as { data: { text?: string } };
      const l = e.data.text ? listeners.get(e.data.text) : undefined;
      if (!l) return;
      l.times.push(at);
      if (--l.left === 0) l.done(l.times);
    };
    sockets.push(ws);
  }
  return {
    sockets,
    waitFor: (text) =>
      new Promise((done, reject) => {
        const t = setTimeout(() => reject(new Error(`"${text}" not received on every socket within 15 s`)), 15_000);
        listeners.set(text, { left: n, times: [], done: (times) => (clearTimeout(t), done(times)) });
      }),
  };
}

try {
  const session = await post<{ id: string }>("/api/sessions", { name: "bench-stream" });
  const rows: { sockets: number; samples: number; p50: number; p95: number; max: number }[] = [];
  for (const n of SOCKETS) {
    const { sockets, waitFor } = await openSockets(n, session.id);
    const samples: number[] = [];
    for (let r = -3; r < ROUNDS; r++) {
      const text = `bench ${n} ${r} ${Math.random()}`;
      const receipts = waitFor(text);
      const t0 = performance.now();
      await post(`/api/sessions/${session.id}/sandbox/inbound`, { from: "15550009999", text });
      const times = await receipts;
      if (r >= 0) for (const t of times) samples.push(t - t0); // the first 3 rounds warm up
      await new Promise((res) => setTimeout(res, 50));
    }
    for (const ws of sockets) ws.close(1000);
    samples.sort((a, b) => a - b);
    rows.push({ sockets: n, samples: samples.length, p50: pct(samples, 50), p95: pct(samples, 95), max: samples[samples.length - 1]! });
    await new Promise((res) => setTimeout(res, 500));
  }
  console.log(`\nCause (sandbox inbound POST) -> client receipt on /api/events/stream, ${ROUNDS} rounds\n`);
  console.log("| sockets | samples | p50 ms | p95 ms | max ms |");
  console.log("| ---: | ---: | ---: | ---: | ---: |");
  for (const r of rows) console.log(`| ${r.sockets} | ${r.samples} | ${r.p50.toFixed(1)} | ${r.p95.toFixed(1)} | ${r.max.toFixed(1)} |`);
  console.log(`\nratio p50 (50 sockets / 1 socket): ${(rows[1]!.p50 / rows[0]!.p50).toFixed(2)}`);
  const ok = rows.every((r) => r.p50 < FLOOR_P50_MS);
  console.log(`floor p50 < ${FLOOR_P50_MS} ms: ${ok ? "met" : "NOT met"}`);
  process.exitCode = ok ? 0 : 1;
} finally {
  await dev?.stop();
}
