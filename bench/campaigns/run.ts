// Campaigns on the sandbox network against `npm run dev`:
//  1. Unpaced campaigns of 1,000 and 10,000 contacts (one tag each): time from POST /start to
//     `completed` (every recipient sent), per-recipient cost, and the growth ratio of that cost from
//     1k to 10k (linear growth = 1.0).
//  2. A campaign paced at 60/min: sends counted over 3 minutes (PACED_SECONDS) from the first one.
// Floors: 10,000 recipients completed within 120 s; the paced rate within 5 % of 60/min.
// Usage: npm run bench:campaigns   (SIZES=1000,10000  PACED_SECONDS=180 (0 skips)  BASE_URL=... KEY=...)
import { startDev } from "../../test/e2e/harness.ts";
import { floor } from "../floors.ts";

const SIZES = (process.env.SIZES ?? "1000,10000").split(",").map(Number);
const PACED_SECONDS = Number(process.env.PACED_SECONDS ?? 180);
const PACED_RATE = 60;

const dev = process.env.BASE_URL ? null : await startDev();
const baseUrl = process.env.BASE_URL ?? dev!.baseUrl;
const key = process.env.KEY ?? (await dev!.createKey("enterprise", ["--limit", "1000000"]));
const headers = { Authorization: `Bearer ${key}`, "Content-Type": "application/json" };

async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(baseUrl + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

interface Campaign {
  id: string;
  status: string;
  stats: { total: number; pending: number; sent: number; delivered: number; read: number; failed: number; skipped: number };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
let phoneBase = 2_000_000;

/** Contacts through the bulk import (1,000 per request). */
async function contacts(n: number, tag: string): Promise<void> {
  for (let i = 0; i < n; i += 1000) {
    const items = Array.from({ length: Math.min(1000, n - i) }, (_, j) => ({ phone: `+1650${phoneBase + i + j}`, name: `Person ${i + j}`, tags: [tag], attributes: { city: "Lisbon" } }));
    await call("POST", "/api/contacts/import", { contacts: items });
  }
  phoneBase += n;
}

async function waitFor(id: string, done: (c: Campaign) => boolean, timeoutMs: number): Promise<Campaign> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const c = await call<Campaign>("GET", `/api/campaigns/${id}`);
    const s = c.stats;
    if (s.pending + s.sent + s.delivered + s.read + s.failed + s.skipped !== s.total) throw new Error(`stats do not add up: ${JSON.stringify(s)}`);
    if (done(c)) return c;
    if (Date.now() > end) throw new Error(`campaign ${id} not done within ${timeoutMs} ms: ${JSON.stringify(c)}`);
    await sleep(100);
  }
}

try {
  const rows: { size: number; seconds: number; perRecipientMs: number; perSecond: number; readSeconds: number }[] = [];
  for (const size of SIZES) {
    const session = await call<{ id: string }>("POST", "/api/sessions", { name: `bench ${size}` });
    const tag = `bench${size}`;
    await contacts(size, tag);
    await sleep(3000); // let the contact.created events drain so they do not compete
    const c = await call<Campaign>("POST", "/api/campaigns", { name: `bench ${size}`, sessionId: session.id, message: { text: "Hi {{name|there}} in {{attributes.city}}" }, audience: { tags: [tag] } });
    const t0 = performance.now();
    await call("POST", `/api/campaigns/${c.id}/start`);
    const done = await waitFor(c.id, (x) => x.status === "completed", 300_000);
    const seconds = (performance.now() - t0) / 1000;
    if (done.stats.total !== size || done.stats.failed || done.stats.skipped) throw new Error(`unexpected stats ${JSON.stringify(done.stats)}`);
    await waitFor(c.id, (x) => x.stats.read === size, 300_000);
    const readSeconds = (performance.now() - t0) / 1000;
    rows.push({ size, seconds, perRecipientMs: (seconds * 1000) / size, perSecond: size / seconds, readSeconds });
    console.error(`${size}: completed in ${seconds.toFixed(1)} s, all read in ${readSeconds.toFixed(1)} s`);
    await sleep(5000); // receipts and events of this run drain before the next
  }

  console.log("\n| recipients | start → completed | per recipient | recipients/s | start → all read |");
  console.log("| ---: | ---: | ---: | ---: | ---: |");
  for (const r of rows) console.log(`| ${r.size.toLocaleString("en")} | ${r.seconds.toFixed(1)} s | ${r.perRecipientMs.toFixed(2)} ms | ${r.perSecond.toFixed(0)} | ${r.readSeconds.toFixed(1)} s |`);
  const small = rows.find((r) => r.size === 1000);
  const big = rows.find((r) => r.size === 10000);
  if (small && big) {
    const ratio = big.perRecipientMs / small.perRecipientMs;
    console.log(`\nper-recipient cost 10k / 1k: ${ratio.toFixed(2)} (1.00 = linear)`);
  }
  if (big) floor(`floor: 10,000 recipients completed within 120 s: ${big.seconds.toFixed(1)} s`, big.seconds <= 120);

  if (PACED_SECONDS > 0) {
    const session = await call<{ id: string }>("POST", "/api/sessions", { name: "bench paced" });
    const n = Math.ceil((PACED_SECONDS / 60) * PACED_RATE * 1.2) + 10;
    await contacts(n, "paced");
    const c = await call<Campaign>("POST", "/api/campaigns", { name: "paced", sessionId: session.id, message: { text: "Hi {{name}}" }, audience: { tags: ["paced"] }, pacing: { perMinute: PACED_RATE, jitterPct: 25 } });
    await call("POST", `/api/campaigns/${c.id}/start`);
    await sleep(PACED_SECONDS * 1000 + 5000);
    await call("POST", `/api/campaigns/${c.id}/cancel`);
    const sentAt: number[] = [];
    let cursor: string | null = null;
    do {
      const page: { data: { sentAt: string | null }[]; nextCursor: string | null } = await call("GET", `/api/campaigns/${c.id}/recipients?limit=100${cursor ? `&cursor=${cursor}` : ""}`);
      for (const r of page.data) if (r.sentAt) sentAt.push(Date.parse(r.sentAt));
      cursor = page.nextCursor;
    } while (cursor);
    sentAt.sort((a, b) => a - b);
    const first = sentAt[0]!;
    const inWindow = sentAt.filter((t) => t < first + PACED_SECONDS * 1000).length;
    const rate = inWindow / (PACED_SECONDS / 60);
    const deviation = Math.abs(rate - PACED_RATE) / PACED_RATE;
    const gaps = sentAt.slice(1).map((t, i) => t - sentAt[i]!);
    console.log(`\n| pacing | window | sent in window | measured rate | deviation | gap min / max |`);
    console.log("| ---: | ---: | ---: | ---: | ---: | ---: |");
    console.log(`| ${PACED_RATE}/min, ±25 % jitter | ${PACED_SECONDS} s | ${inWindow} | ${rate.toFixed(1)}/min | ${(deviation * 100).toFixed(1)} % | ${Math.min(...gaps)} / ${Math.max(...gaps)} ms |`);
    floor(`floor: paced rate within 5 % of ${PACED_RATE}/min:`, deviation <= 0.05);
  }
} finally {
  await dev?.stop();
}
