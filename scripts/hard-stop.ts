// Nothing lost, nothing twice, across a power cut: starts `npm run dev` on a fresh state directory,
// registers a webhook on `*` (a local receiver), sends SENDS sandbox messages 20 at a time, and the
// moment the last `201` is in, SIGKILLs the whole process tree (npm, the dev script, wrangler,
// workerd, the compile server): whatever the Session DOs and the queues held only in memory (the
// events flush, receipts) is gone. It then starts `npm run dev` again on the same state and checks
// that every acknowledged message is in D1 exactly once and that each of its events (`message.sent`,
// `message.delivered`, `message.read`) reaches the webhook at least once, every copy with the same
// `webhook-id`, and that the session's `sequence` never repeats across events. Sends are answered once
// they are in the session's Durable Object (its write buffer), so the kill finds most of them not yet
// in D1: the session commits them when its alarm fires after the restart. Events recorded but never put on the
// queue are found by the cron once STRANDED_EVENT_MS old: when the dev server offers wrangler's
// `--test-scheduled` trigger, the check fires the cron itself with a scheduled time that far past the
// kill (virtual time: the cron's tasks take their `now` from it) instead of waiting minutes for it.
// A bulk send (BULK messages, each to its own recipient) answered 202 just before the kill is checked the same way.
// Usage: npm run check:hard-stop   (SENDS=200 BULK=100 WAIT_S=360: how long after the kill events may take)
// Exit code 1 when a check fails.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startDev } from "../test/e2e/harness.ts";
import { startReceiver } from "../test/support/receiver.ts";

export interface HardStopReport {
  /** Sends answered 201, and the messages of the bulk send answered 202 just before the kill (within `acknowledged`). */
  acknowledged: number;
  bulkAcknowledged: number;
  /** Acknowledged messages found in D1 after the restart, and those found more than once. */
  inD1: number;
  twiceInD1: number;
  /** Acknowledged messages whose `message.sent` reached the webhook, and those delivered under more than one webhook-id. */
  sentDelivered: number;
  mixedWebhookIds: number;
  /** `message.sent` deliveries repeated after the restart (allowed: at least once, same id). */
  repeats: number;
  /** Acknowledged messages whose `message.sent` never arrived. */
  undelivered: string[];
  /** Acknowledged messages whose `message.delivered` and `message.read` both arrived (each under one webhook-id). */
  receiptsDelivered: number;
  /** Distinct events that arrived with a `sequence` another event of the session also carried (must be 0). */
  repeatedSequences: number;
  /** Whether the cron was fired with a scheduled time past the stranded age (else the check waited for it). */
  virtualCron: boolean;
}

/** The cron's STRANDED_EVENT_MS (src/events/cron.ts) plus a margin: events recorded before the kill are that old then. */
const STRANDED_AGE_MS = 2 * 60_000 + 10_000;

/**
 * Runs the Worker's scheduled handler once with `scheduledTime` = `time`, through the trigger `wrangler dev
 * --test-scheduled` exposes. False when the server does not offer it (the Worker itself answers that path).
 */
export async function fireCron(baseUrl: string, time: number): Promise<boolean> {
  try {
    const res = await fetch(`${baseUrl}/cdn-cgi/handler/scheduled?cron=${encodeURIComponent("* * * * *")}&time=${time}&format=json`);
    const body = (await res.json().catch(() => null)) as { outcome?: unknown } | null;
    return res.status === 200 && body?.outcome === "ok";
  } catch {
    return false;
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function hardStopCheck(opts: { sends?: number; bulk?: number; waitMs?: number; log?: (line: string) => void } = {}): Promise<HardStopReport> {
  const sends = opts.sends ?? 200;
  const bulk = opts.bulk ?? 100;
  const log = opts.log ?? (() => {});
  const persistTo = mkdtempSync(join(tmpdir(), "texmsg-hardstop-"));
  const receiver = await startReceiver();
  // The cron ticks often so stranded events are found soon after they are old enough. The compile server
  // starts and dies with the stack but compiles nothing here: no warm TeX engines (CPU for the sends).
  // Leases of the fan-outs and attempts the kill cut off lapse after WEBHOOK_LEASE_MS: here the shortest
  // allowed (a 5 s attempt timeout, for a receiver on this machine, + 20 s), not the default minute, so the
  // check need not wait that out.
  const env = { DEV_CRON_INTERVAL_MS: "5000", SKIP_TEX_CHECK: "1", POOL_SIZE: "0", WEBHOOK_TIMEOUT_MS: "5000", WEBHOOK_LEASE_MS: "1" };
  const t0 = Date.now();
  const secs = (from: number) => `${((Date.now() - from) / 1000).toFixed(1)} s`;
  let dev = await startDev({ persistTo, env });
  log(`stack up in ${secs(t0)}`);
  try {
    const key = await dev.createKey("enterprise", ["--limit", "1000000"]);
    const call = async (base: string, method: string, path: string, json?: unknown) =>
      fetch(base + path, { method, headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" }, body: json === undefined ? undefined : JSON.stringify(json) });
    const hook = (await (await call(dev.baseUrl, "POST", "/api/webhooks", { url: `${receiver.url}/in/hardstop`, events: ["*"] })).json()) as { secret: string };
    await fetch(`${receiver.url}/inbox/hardstop`, { method: "PUT", body: JSON.stringify({ secrets: [hook.secret] }) });
    const session = (await (await call(dev.baseUrl, "POST", "/api/sessions", { name: "hard stop" })).json()) as { id: string };

    const acked: { id: string; to: string }[] = [];
    let next = 0;
    await Promise.all(
      Array.from({ length: 20 }, async () => {
        while (next < sends) {
          const to = `1417${String(1_000_000 + next++)}`;
          const res = await call(dev.baseUrl, "POST", "/api/messages/send", { sessionId: session.id, to: `+${to}`, text: "hard stop" });
          if (res.status === 201) acked.push({ id: ((await res.json()) as { id: string }).id, to });
        }
      }),
    );
    // A bulk send answered 202 right before the kill: its messages are in the session's object, not yet in D1.
    const bulkTos = Array.from({ length: bulk }, (_, i) => `1418${String(1_000_000 + i)}`);
    const queued = bulk > 0 ? await call(dev.baseUrl, "POST", "/api/messages/send-bulk", { sessionId: session.id, messages: bulkTos.map((to) => ({ to: `+${to}`, text: "hard stop bulk" })) }) : null;
    const bulkAcked = queued?.status === 202 && ((await queued.json()) as { accepted: number }).accepted === bulk ? bulkTos : [];
    await dev.kill();
    const killedAt = Date.now();
    log(`${acked.length} sends and ${bulkAcked.length} bulk messages acknowledged, stack killed; restarting on the same state`);
    // the state's migrations were applied by the first start: applying them again is a no-op
    dev = await startDev({ persistTo, env: { ...env, SKIP_MIGRATIONS: "1" } });
    log(`restarted in ${secs(killedAt)}`);
    // The bulk's messages by their recipients (each its own): one found is checked as a send is; none found
    // stays in the list under an id no event has, so the checks below count it lost.
    for (const to of bulkAcked) {
      const res = await call(dev.baseUrl, "GET", `/api/messages/${to}@c.us?sessionId=${session.id}&limit=10`);
      const found = ((await res.json()) as { data: { id: string; text: string | null }[] }).data.filter((x) => x.text === "hard stop bulk");
      acked.push({ id: found[0]?.id ?? `missing-${to}`, to });
    }

    const sentOf = async () => {
      const got = (await (await fetch(`${receiver.url}/inbox/hardstop`)).json()) as { webhookId: string; type: string | null; body: string; verified: boolean }[];
      const byType = new Map<string, Map<string, Set<string>>>();
      const sequences = new Map<number, Set<string>>();
      let copies = 0;
      for (const d of got) {
        if (!d.type?.startsWith("message.") || !d.verified) continue;
        const body = JSON.parse(d.body) as { sequence?: number; data: { id: string } };
        const ids = byType.get(d.type) ?? new Map<string, Set<string>>();
        byType.set(d.type, ids);
        ids.set(body.data.id, (ids.get(body.data.id) ?? new Set()).add(d.webhookId));
        if (body.sequence !== undefined) sequences.set(body.sequence, (sequences.get(body.sequence) ?? new Set()).add(d.webhookId));
        if (d.type === "message.sent") copies++;
      }
      const ids = byType.get("message.sent") ?? new Map<string, Set<string>>();
      const once = (type: string, id: string) => byType.get(type)?.get(id)?.size === 1;
      const receipts = (id: string) => once("message.delivered", id) && once("message.read", id);
      return { ids, copies, receipts, repeatedSequences: [...sequences.values()].filter((w) => w.size > 1).length };
    };
    const deadline = killedAt + (opts.waitMs ?? 6 * 60_000);
    // Virtual time: the cron as it runs once every event recorded before the kill is stranded-old. Fired
    // again now and then (not every poll: each firing counts as one of an event's few requeues).
    const virtualCron = await fireCron(dev.baseUrl, killedAt + STRANDED_AGE_MS);
    log(virtualCron ? "cron fired with a scheduled time past the stranded age" : "no scheduled trigger on this server: waiting for the cron");
    let fired = Date.now();
    let sent = await sentOf();
    let told = Date.now();
    while (acked.some((m) => !sent.ids.has(m.id) || !sent.receipts(m.id)) && Date.now() < deadline) {
      await sleep(500);
      if (virtualCron && Date.now() - fired >= 15_000) {
        fired = Date.now();
        await fireCron(dev.baseUrl, Math.max(Date.now(), killedAt + STRANDED_AGE_MS));
      }
      sent = await sentOf();
      // a line now and then: the wait for the cron takes minutes, and silence looks like a hang
      if (Date.now() - told >= 30_000) {
        told = Date.now();
        log(`${acked.filter((m) => sent.ids.has(m.id)).length} of ${acked.length} delivered so far`);
      }
    }
    log(`events waited for ${secs(killedAt)} after the kill`);
    let inD1 = 0;
    let twiceInD1 = 0;
    for (const m of acked) {
      // Each message went to its own recipient: its chat holds it once, or it is missing or doubled.
      const res = await call(dev.baseUrl, "GET", `/api/messages/${m.to}@c.us?sessionId=${session.id}&limit=10`);
      const found = ((await res.json()) as { data: { id: string }[] }).data.filter((x) => x.id === m.id).length;
      if (found >= 1) inD1++;
      if (found > 1) twiceInD1++;
    }
    const mine = acked.filter((m) => sent.ids.has(m.id));
    return {
      acknowledged: acked.length,
      bulkAcknowledged: bulkAcked.length,
      inD1,
      twiceInD1,
      sentDelivered: mine.length,
      mixedWebhookIds: mine.filter((m) => sent.ids.get(m.id)!.size > 1).length,
      repeats: sent.copies - sent.ids.size,
      undelivered: acked.filter((m) => !sent.ids.has(m.id)).map((m) => m.id),
      receiptsDelivered: acked.filter((m) => sent.receipts(m.id)).length,
      repeatedSequences: sent.repeatedSequences,
      virtualCron,
    };
  } finally {
    await dev.stop();
    await receiver.close();
    rmSync(persistTo, { recursive: true, force: true });
  }
}

if (import.meta.main) {
  const r = await hardStopCheck({ sends: Number(process.env.SENDS ?? 200), bulk: Number(process.env.BULK ?? 100), waitMs: Number(process.env.WAIT_S ?? 360) * 1000, log: (l) => console.log(l) });
  console.log(JSON.stringify(r, null, 2));
  const ok = r.acknowledged > 0 && r.inD1 === r.acknowledged && r.twiceInD1 === 0 && r.sentDelivered === r.acknowledged && r.mixedWebhookIds === 0 && r.receiptsDelivered === r.acknowledged && r.repeatedSequences === 0;
  console.log(ok ? "PASS: every acknowledged message once in D1, each of its events delivered under one webhook-id, no sequence repeated" : "FAIL");
  process.exitCode = ok ? 0 : 1;
}
