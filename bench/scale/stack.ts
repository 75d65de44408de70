// What bench/scale's flows share: `npm run dev` on the counting Worker (worker.ts), an account per
// flow, a webhook receiver that only counts, and the D1 counters.
import { readdirSync, readFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { startDev, type DevServer } from "../../test/e2e/harness.ts";

export interface Counters {
  statements: number;
  roundTrips: number;
  rowsRead: number;
  rowsWritten: number;
  tables: Record<string, number>;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
export const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
export const rowsOf = (c: Counters) => Object.values(c.tables).reduce((s, n) => s + n, 0);

/** One delivery as the receiver saw it: the event's type, its webhook-id, when, and the bench token in its body. */
export interface Delivery {
  id: string;
  type: string | null;
  at: number;
  token: string | null;
}

/** A webhook receiver that answers 200 at once and keeps one small record per delivery, per inbox. */
export async function countingReceiver() {
  const inboxes = new Map<string, Delivery[]>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const name = (req.url ?? "").split("/")[2] ?? "";
      const body = Buffer.concat(chunks).toString("utf8");
      let type: string | null = null;
      try {
        type = (JSON.parse(body) as { type?: string }).type ?? null;
      } catch {}
      const token = /bench-\d+/.exec(body)?.[0] ?? null;
      if (!inboxes.has(name)) inboxes.set(name, []);
      inboxes.get(name)!.push({ id: String(req.headers["webhook-id"] ?? ""), type, at: Date.now(), token });
      res.writeHead(200).end("ok");
    });
  });
  // Never close an idle connection: workerd reusing one as it closes loses the attempt (the client closes its own).
  server.keepAliveTimeout = 0;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    inbox: (name: string) => inboxes.get(name) ?? [],
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}

export type Receiver = Awaited<ReturnType<typeof countingReceiver>>;

export async function startStack(): Promise<DevServer> {
  // The cron stays quiet (its housekeeping would count as the flows' statements).
  return startDev({ env: { WORKER_MAIN: "bench/scale/worker.ts", DEV_CRON_INTERVAL_MS: String(24 * 3600_000) } });
}

/** A client of one account on the stack. `observe` requests are not counted (progress polling). */
export function client(baseUrl: string, key: string) {
  const call = async <T>(method: string, path: string, body?: unknown, observe = false): Promise<T> => {
    const headers: Record<string, string> = { Authorization: `Bearer ${key}`, "Content-Type": "application/json", ...(observe ? { "x-bench-observer": "1" } : {}) };
    const res = await fetch(baseUrl + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
    return (await res.json()) as T;
  };
  return { call, key };
}

export async function counters(baseUrl: string, reset = false, tables = true): Promise<Counters> {
  return (await (await fetch(`${baseUrl}/__bench/d1${tables ? "" : "?tables=0"}`, { method: reset ? "POST" : "GET" })).json()) as Counters;
}

/** Waits until no D1 statement has run for `quietMs` (the flow's background work is done), at most `maxMs`. */
export async function settle(baseUrl: string, quietMs = 2_000, maxMs = 180_000): Promise<Counters> {
  const end = Date.now() + maxMs;
  let last = await counters(baseUrl, false, false);
  let since = Date.now();
  while (Date.now() < end) {
    await sleep(250);
    const now = await counters(baseUrl, false, false);
    if (now.statements !== last.statements) {
      last = now;
      since = Date.now();
    } else if (Date.now() - since >= quietMs) return counters(baseUrl);
  }
  throw new Error(`D1 never went quiet within ${maxMs} ms`);
}

/** Waits until `inbox` holds `n` deliveries with distinct webhook-ids; answers them. */
export async function deliveries(receiver: Receiver, inbox: string, n: number, maxMs: number): Promise<Delivery[]> {
  const end = Date.now() + maxMs;
  for (;;) {
    const got = receiver.inbox(inbox);
    if (new Set(got.map((d) => d.id)).size >= n || Date.now() > end) return got;
    await sleep(200);
  }
}

/**
 * CPU time (ms) the workerd processes serving `baseUrl` have used so far (Linux /proc; NaN elsewhere):
 * wrangler runs two, the one listening on the port and the one running the Worker, its Durable
 * Objects, queues and local D1, children of the same wrangler process. Unlike wall time it hardly
 * moves with the machine's load.
 */
export function workerdCpuMs(baseUrl: string): number {
  const port = new URL(baseUrl).port;
  const stat = (pid: string) => readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  try {
    const workerds = readdirSync("/proc")
      .filter((e) => /^\d+$/.test(e))
      .flatMap((pid) => {
        try {
          const cmd = readFileSync(`/proc/${pid}/cmdline`, "utf8");
          return cmd.includes("workerd") ? [{ pid, cmd, ppid: stat(pid)[1] }] : [];
        } catch {
          return [];
        }
      });
    const entry = workerds.find((w) => w.cmd.includes(`127.0.0.1:${port}`));
    if (!entry) return NaN;
    // utime and stime: the 12th and 13th fields after the command's closing parenthesis, in clock ticks (100/s).
    return workerds.filter((w) => w.ppid === entry.ppid).reduce((ms, w) => ms + (Number(stat(w.pid)[11]) + Number(stat(w.pid)[12])) * 10, 0);
  } catch {
    return NaN;
  }
}
