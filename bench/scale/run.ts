// The messaging core at scale, against `npm run dev` on local bindings (`npm run bench:scale`). Each
// flow runs on its own account, one after another, each after the previous one's background work is
// done:
//  1. Single sends at ~RATE requests/s (SINGLE of them), one webhook on `*`: D1 statements and rows
//     inserted per send, from the request to its `read` and all three events delivered.
//  2. A BULK-message bulk send (requests of 1,000), one webhook on `*`: time until all are `sent`; D1
//     statements and rows inserted per message through `read` and every event delivered.
//  3. Latency: `/health` p50 and single send p50 (one client in a loop, no webhook).
//  4. Webhook cause -> receiver: EVENTS inbound sandbox messages (20 at a time), from the request to
//     the receiver getting its `message.received`; p50, p95, lost.
//  5. Unpaced campaigns of CAMPAIGN_SIZES recipients: POST /start -> `completed`, per-recipient cost
//     and its growth from the smallest size to the largest (1.00 = linear); also the CPU time workerd
//     spent per recipient (to `completed`, and until its receipts and events are done), which moves
//     far less with the machine's load than wall time.
// D1 statements are counted inside the Worker: `npm run dev` runs bench/scale/worker.ts, the real
// Worker with its D1 binding wrapped (d1-count.ts) in every handler and Durable Object: one per
// statement executed (a batch of n is n). Rows inserted are the growth of all tables' row counts.
// The bench's own progress polling is not counted (x-bench-observer). Floors: see FLOORS below; a
// failed one makes the exit code non-zero.
// Usage: npm run bench:scale   (SINGLE=1000 RATE=100 BULK=5000 EVENTS=1000 CAMPAIGN_SIZES=10000,100000
// FLOWS=single,bulk,latency,hooks,campaigns: the flows to run, all by default)
import autocannon from "autocannon";
import { floor } from "../floors.ts";
import { client, counters, countingReceiver, deliveries, percentile, rowsOf, settle, sleep, startStack, workerdCpuMs } from "./stack.ts";

const SINGLE = Number(process.env.SINGLE ?? 1000);
const RATE = Number(process.env.RATE ?? 100);
const BULK = Number(process.env.BULK ?? 5000);
const EVENTS = Number(process.env.EVENTS ?? 1000);
const CAMPAIGN_SIZES = (process.env.CAMPAIGN_SIZES ?? "10000,100000").split(",").filter(Boolean).map(Number);
const FLOWS = new Set((process.env.FLOWS ?? "single,bulk,latency,hooks,campaigns").split(","));

const receiver = await countingReceiver();
const dev = await startStack();
const { baseUrl } = dev;
const account = async () => client(baseUrl, await dev.createKey("enterprise", ["--limit", "1000000"]));
const messageEvents = (inbox: string) => receiver.inbox(inbox).filter((d) => d.type?.startsWith("message."));

/** An account with one webhook on `*` to `inbox` and one sandbox session, its setup's work settled, counters reset. */
async function flowStart(inbox: string) {
  const c = await account();
  await c.call("POST", "/api/webhooks", { url: `${receiver.url}/in/${inbox}`, events: ["*"] });
  const session = await c.call<{ id: string }>("POST", "/api/sessions", { name: inbox });
  await settle(baseUrl);
  const before = await counters(baseUrl, true);
  return { ...c, session: session.id, before };
}

/** Statements and rows inserted per message once every event of `n` messages (3 each) reached the receiver. */
async function perMessage(inbox: string, n: number, beforeRows: number) {
  await deliveries(receiver, inbox, 3 * n + 1, 300_000); // + session.connected
  const after = await settle(baseUrl);
  const events = messageEvents(inbox);
  return { statements: after.statements / n, roundTrips: after.roundTrips / n, rows: (rowsOf(after) - beforeRows) / n, events: new Set(events.map((d) => d.id)).size, expected: 3 * n };
}

async function singleSends() {
  const f = await flowStart("single");
  const t0 = performance.now();
  const sends: Promise<unknown>[] = [];
  for (let i = 0; i < SINGLE; i++) {
    const wait = t0 + (i * 1000) / RATE - performance.now();
    if (wait > 0) await sleep(wait);
    sends.push(f.call("POST", "/api/messages/send", { sessionId: f.session, to: `+1415${2_000_000 + i}`, text: `bench-${i}` }));
  }
  await Promise.all(sends);
  const rate = SINGLE / ((performance.now() - t0) / 1000);
  return { rate, ...(await perMessage("single", SINGLE, rowsOf(f.before))) };
}

async function bulkSend() {
  const f = await flowStart("bulk");
  const t0 = Date.now();
  const cpu0 = workerdCpuMs(baseUrl);
  const batches: string[] = [];
  for (let i = 0; i < BULK; i += 1000) {
    const items = Array.from({ length: Math.min(1000, BULK - i) }, (_, j) => ({ to: `+1650${String(1_000_000 + i + j)}`, text: `bench-${i + j}` }));
    batches.push((await f.call<{ batchId: string }>("POST", "/api/messages/send-bulk", { sessionId: f.session, messages: items })).batchId);
  }
  // One observer request at a time, each batch until it is done (every poll of a batch commits its
  // session's buffer and counts its messages: five polls every 50 ms made the bench part of the load).
  let sentMs = NaN;
  let done = 0;
  while (Date.now() - t0 < 300_000) {
    const progress = await f.call<{ pending: number }>("GET", `/api/messages/batches/${batches[done]}`, undefined, true);
    if (progress.pending === 0 && ++done === batches.length) {
      sentMs = Date.now() - t0;
      break;
    }
    if (progress.pending > 0) await sleep(50);
  }
  const counted = await perMessage("bulk", BULK, rowsOf(f.before));
  // workerd's CPU per message until every event is delivered: moves far less with the machine's load than wall time.
  return { sentMs, cpuPerMessageMs: (workerdCpuMs(baseUrl) - cpu0) / BULK, ...counted };
}

async function latency() {
  const c = await account();
  const session = await c.call<{ id: string }>("POST", "/api/sessions", { name: "latency" });
  let n = 0;
  const send = {
    url: `${baseUrl}/api/messages/send`,
    method: "POST" as const,
    headers: { Authorization: `Bearer ${c.key}`, "Content-Type": "application/json" },
    connections: 1,
    requests: [{ setupRequest: (req: autocannon.Request) => ({ ...req, body: JSON.stringify({ sessionId: session.id, to: `+1416${1_000_000 + n++}`, text: "bench" }) }) }],
  };
  await autocannon({ url: `${baseUrl}/health`, connections: 1, duration: 1 });
  const health = await autocannon({ url: `${baseUrl}/health`, connections: 1, duration: 5 });
  await autocannon({ ...send, duration: 2 });
  await settle(baseUrl);
  const single = await autocannon({ ...send, duration: 5 });
  await settle(baseUrl);
  return { health: health.latency.p50, send: single.latency.p50, errors: single.non2xx + single.errors };
}

async function webhookLatency() {
  const c = await account();
  const session = await c.call<{ id: string }>("POST", "/api/sessions", { name: "hooks" });
  await c.call("POST", "/api/webhooks", { url: `${receiver.url}/in/hooks`, events: ["message.received"], sessionId: session.id });
  await settle(baseUrl);
  const cpu0 = workerdCpuMs(baseUrl);
  const sentAt = new Map<string, number>();
  const answeredMs: number[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: 20 }, async () => {
      while (next < EVENTS) {
        const i = next++;
        const at = Date.now();
        sentAt.set(`bench-${i}`, at);
        await c.call("POST", `/api/sessions/${session.id}/sandbox/inbound`, { from: `1555${String(i).padStart(7, "0")}@c.us`, text: `bench-${i}` });
        answeredMs.push(Date.now() - at);
      }
    }),
  );
  const got = await deliveries(receiver, "hooks", EVENTS, 60_000);
  const first = new Map<string, number>();
  for (const d of got) if (d.token && !first.has(d.token)) first.set(d.token, d.at);
  const ms = [...first].map(([token, at]) => at - sentAt.get(token)!).sort((a, b) => a - b);
  await settle(baseUrl);
  // Less moved by the machine's load than the latencies: with the CPU saturated, they are mostly queueing.
  const cpuPerEventMs = (workerdCpuMs(baseUrl) - cpu0) / EVENTS;
  answeredMs.sort((a, b) => a - b);
  return { p50: percentile(ms, 50), p95: percentile(ms, 95), lost: EVENTS - first.size, answerP50: percentile(answeredMs, 50), cpuPerEventMs };
}

async function campaign(size: number) {
  const c = await account();
  const session = await c.call<{ id: string }>("POST", "/api/sessions", { name: `campaign ${size}` });
  for (let i = 0; i < size; i += 1000) {
    const items = Array.from({ length: Math.min(1000, size - i) }, (_, j) => ({ phone: `+1651${String(1_000_000 + i + j)}`, name: `Person ${i + j}`, tags: ["all"] }));
    await c.call("POST", "/api/contacts/import", { contacts: items });
  }
  const limitMs = Math.max(900_000, size * 20);
  await settle(baseUrl, 2_000, limitMs); // the contact.created events are fanned out first
  const created = await c.call<{ id: string }>("POST", "/api/campaigns", { name: `bench ${size}`, sessionId: session.id, message: { text: "Hi {{name|there}}" }, audience: { tags: ["all"] } });
  const t0 = performance.now();
  const cpu0 = workerdCpuMs(baseUrl);
  await c.call("POST", `/api/campaigns/${created.id}/start`);
  for (;;) {
    const s = await c.call<{ status: string; stats: { total: number; failed: number } }>("GET", `/api/campaigns/${created.id}`, undefined, true);
    if (s.status === "completed") {
      if (s.stats.total !== size || s.stats.failed) throw new Error(`campaign ${size}: ${JSON.stringify(s.stats)}`);
      break;
    }
    if (performance.now() - t0 > limitMs) throw new Error(`campaign ${size} not completed within ${limitMs / 1000} s`);
    await sleep(100);
  }
  const seconds = (performance.now() - t0) / 1000;
  const cpuMs = workerdCpuMs(baseUrl) - cpu0;
  await settle(baseUrl, 2_000, limitMs);
  // Everything the campaign caused (receipts, events), to the last D1 statement.
  const cpuAllMs = workerdCpuMs(baseUrl) - cpu0;
  return { size, seconds, perRecipientMs: (seconds * 1000) / size, cpuPerRecipientMs: cpuMs / size, cpuAllPerRecipientMs: cpuAllMs / size };
}

try {
  const skipped = { statements: NaN, roundTrips: NaN, rows: NaN, events: 0, expected: 0, rate: NaN, sentMs: NaN, cpuPerMessageMs: NaN };
  const single = FLOWS.has("single") ? await singleSends() : skipped;
  console.error(`single sends: ${JSON.stringify(single)}`);
  const bulk = FLOWS.has("bulk") ? await bulkSend() : skipped;
  console.error(`bulk: ${JSON.stringify(bulk)}`);
  const lat = FLOWS.has("latency") ? await latency() : { health: NaN, send: NaN, errors: 0 };
  console.error(`latency: ${JSON.stringify(lat)}`);
  const hooks = FLOWS.has("hooks") ? await webhookLatency() : { p50: NaN, p95: NaN, lost: 0, answerP50: NaN, cpuPerEventMs: NaN };
  console.error(`webhooks: ${JSON.stringify(hooks)}`);
  const campaigns = [];
  for (const size of FLOWS.has("campaigns") ? CAMPAIGN_SIZES : []) {
    campaigns.push(await campaign(size));
    console.error(`campaign: ${JSON.stringify(campaigns.at(-1))}`);
  }
  const [small, big] = [campaigns[0], campaigns.at(-1)];
  const growth = small && big && big !== small ? big.perRecipientMs / small.perRecipientMs : NaN;
  const f = (x: number, d = 2) => (Number.isFinite(x) ? x.toFixed(d) : "n/a");

  console.log(`\n| measure | value | floor |`);
  console.log("| --- | ---: | ---: |");
  console.log(`| D1 statements per message, ${BULK}-message bulk to read, webhook on \`*\` | ${f(bulk.statements)} (${f(bulk.roundTrips)} round trips) | ≤ 0.2 |`);
  console.log(`| D1 statements per single send at ${f(single.rate, 0)} req/s, to read, webhook on \`*\` | ${f(single.statements)} (${f(single.roundTrips)} round trips) | ≤ 2 |`);
  console.log(`| rows inserted per message (bulk / single) | ${f(bulk.rows)} / ${f(single.rows)} | ≤ 6 |`);
  for (const c of campaigns) console.log(`| unpaced campaign of ${c.size.toLocaleString("en")}, start → completed | ${f(c.seconds, 1)} s (${f(c.perRecipientMs, 3)} ms/recipient; workerd CPU ${f(c.cpuPerRecipientMs, 3)} ms, ${f(c.cpuAllPerRecipientMs, 3)} ms with its receipts and events) | ${c === big ? "≤ 60 s" : ""} |`);
  console.log(`| per-recipient cost ${big?.size ?? "?"} / ${small?.size ?? "?"} | ${f(growth)} | ≤ 1.2 |`);
  console.log(`| ${BULK}-message bulk, all sent | ${f(bulk.sentMs / 1000)} s (workerd CPU ${f(bulk.cpuPerMessageMs)} ms per message, to every event delivered) | ≤ 2 s |`);
  console.log(`| single send p50 / \`/health\` p50 | ${lat.send} ms / ${lat.health} ms | ≤ /health + 3 ms |`);
  console.log(`| webhook cause → receiver p50 / p95, ${EVENTS} events | ${hooks.p50} / ${hooks.p95} ms, ${hooks.lost} lost (inbound request answered p50 ${hooks.answerP50} ms; workerd CPU ${f(hooks.cpuPerEventMs)} ms per inbound message, to its delivery) | ≤ 250 ms, 0 lost |`);
  console.log(`| events delivered (bulk, single) | ${bulk.events}/${bulk.expected}, ${single.events}/${single.expected} | all |\n`);

  if (FLOWS.has("bulk")) floor(`floor: D1 statements per message (bulk) ≤ 0.2: ${f(bulk.statements)}`, bulk.statements <= 0.2);
  if (FLOWS.has("single")) floor(`floor: D1 statements per single send ≤ 2: ${f(single.statements)}`, single.statements <= 2);
  if (FLOWS.has("bulk") && FLOWS.has("single")) floor(`floor: rows inserted per message ≤ 6: ${f(bulk.rows)}, ${f(single.rows)}`, bulk.rows <= 6 && single.rows <= 6);
  if (big) floor(`floor: ${big.size} campaign ≤ 60 s: ${f(big.seconds, 1)} s`, big.seconds <= 60);
  if (campaigns.length > 1) floor(`floor: per-recipient cost growth ≤ 1.2: ${f(growth)}`, growth <= 1.2);
  if (FLOWS.has("bulk")) floor(`floor: bulk all sent ≤ 2 s: ${f(bulk.sentMs / 1000)} s`, bulk.sentMs <= 2000);
  if (FLOWS.has("latency")) floor(`floor: single send p50 ≤ /health p50 + 3 ms: ${lat.send} vs ${lat.health}`, lat.send <= lat.health + 3 && lat.errors === 0);
  if (FLOWS.has("hooks")) floor(`floor: webhook p50 ≤ 250 ms, none lost: ${hooks.p50} ms, ${hooks.lost} lost`, hooks.p50 <= 250 && hooks.lost === 0);
  floor(`floor: every event delivered: ${bulk.events + single.events}/${bulk.expected + single.expected}`, bulk.events === bulk.expected && single.events === single.expected);
} finally {
  await dev.stop();
  await receiver.close();
}
