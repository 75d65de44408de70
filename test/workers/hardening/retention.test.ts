import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { purgeExpiredJobs } from "../../../src/compile/retention.ts";
import { jobInputKey, jobPdfKey } from "../../../src/compile/jobs.ts";
import { getDb } from "../../../src/db/client.ts";
import { compileJobs, events, messages, webhookAttempts, webhookDeliveries } from "../../../src/db/schema/index.ts";
import { purgeExpiredEventRows } from "../../../src/events/retention.ts";
import { purgeExpiredMessages } from "../../../src/messaging/messages/retention.ts";
import { newId } from "../../../src/platform/ids.ts";
import { PURGE_BATCH, retention } from "../../../src/platform/retention.ts";

const DAY = 86_400_000;
const NOW = Date.now();
/** Messaging and events rows go to the second shard: the cron purges every shard, not only the first. */
const db = () => getDb(env.SHARD_1);
const directory = () => getDb(env.DB);

async function exists(table: string, id: string): Promise<boolean> {
  const d1 = table === "compile_jobs" ? env.DB : env.SHARD_1;
  return (await d1.prepare(`SELECT 1 AS x FROM ${table} WHERE id = ?`).bind(id).first()) !== null;
}

function event(at: number, accountId: string) {
  return { id: newId("evt", at), accountId, type: "contact.created", sessionId: null, payload: "{}", createdAt: at, fannedOutAt: at, requeues: 0 };
}

function delivery(at: number, accountId: string, eventId: string, status: "pending" | "succeeded" | "failed") {
  return { id: newId("dlv", at), accountId, webhookId: "wh_x", eventId, eventType: "contact.created", status, attempts: 1, nextAttemptAt: null, createdAt: at, updatedAt: at };
}

function message(at: number, accountId: string, status: "pending" | "sent") {
  return { id: newId("msg", at), accountId, sessionId: "ses_x", chatId: "14155550123@c.us", direction: "outbound" as const, type: "text" as const, text: "hi", status, createdAt: at };
}

describe("retention", () => {
  it("the defaults: events, deliveries and attempts 30 days, compile jobs 7, messages kept", () => {
    const r = retention({} as Env);
    expect(r).toEqual({ RETENTION_EVENTS_DAYS: 30, RETENTION_WEBHOOK_DELIVERIES_DAYS: 30, RETENTION_WEBHOOK_ATTEMPTS_DAYS: 30, RETENTION_COMPILE_JOBS_DAYS: 7, RETENTION_MESSAGES_DAYS: null });
    expect(retention({ RETENTION_EVENTS_DAYS: "90", RETENTION_MESSAGES_DAYS: "365", RETENTION_COMPILE_JOBS_DAYS: "0" } as Env)).toMatchObject({ RETENTION_EVENTS_DAYS: 90, RETENTION_MESSAGES_DAYS: 365, RETENTION_COMPILE_JOBS_DAYS: null });
  });

  it("events, deliveries and attempts: old rows go, new ones stay, an event a pending delivery needs stays", async () => {
    const acc = newId("acc");
    const oldEvent = event(NOW - 31 * DAY, acc);
    const neededEvent = event(NOW - 31 * DAY + 1, acc);
    const newEvent = event(NOW - 29 * DAY, acc);
    await db().insert(events).values([oldEvent, neededEvent, newEvent]);
    const oldDone = delivery(NOW - 31 * DAY, acc, oldEvent.id, "succeeded");
    const oldPending = delivery(NOW - 31 * DAY, acc, neededEvent.id, "pending");
    const newDone = delivery(NOW - 29 * DAY, acc, newEvent.id, "failed");
    await db().insert(webhookDeliveries).values([oldDone, oldPending, newDone]);
    const oldAttempt = { id: newId("att", NOW - 31 * DAY), deliveryId: oldDone.id, accountId: acc, attempt: 1, statusCode: 200, durationMs: 5, createdAt: NOW - 31 * DAY };
    const newAttempt = { id: newId("att", NOW - 29 * DAY), deliveryId: newDone.id, accountId: acc, attempt: 1, statusCode: 500, durationMs: 5, createdAt: NOW - 29 * DAY };
    await db().insert(webhookAttempts).values([oldAttempt, newAttempt]);

    await purgeExpiredEventRows(env, NOW);

    expect(await exists("events", oldEvent.id)).toBe(false);
    expect(await exists("events", neededEvent.id)).toBe(true);
    expect(await exists("events", newEvent.id)).toBe(true);
    expect(await exists("webhook_deliveries", oldDone.id)).toBe(false);
    expect(await exists("webhook_deliveries", oldPending.id)).toBe(true);
    expect(await exists("webhook_deliveries", newDone.id)).toBe(true);
    expect(await exists("webhook_attempts", oldAttempt.id)).toBe(false);
    expect(await exists("webhook_attempts", newAttempt.id)).toBe(true);
  });

  it("works in bounded batches, oldest first", async () => {
    const acc = newId("acc");
    const rows = Array.from({ length: PURGE_BATCH + 40 }, (_, i) => event(NOW - 60 * DAY + i * 1000, acc));
    for (let i = 0; i < rows.length; i += 10) await db().insert(events).values(rows.slice(i, i + 10));
    const left = async () => (await env.SHARD_1.prepare("SELECT count(*) AS n FROM events WHERE account_id = ?").bind(acc).first<{ n: number }>())!.n;
    await purgeExpiredEventRows(env, NOW);
    // Other tests' old events may share the batch; at most PURGE_BATCH went, and the newest stayed.
    expect(await left()).toBeGreaterThanOrEqual(40);
    expect(await exists("events", rows[rows.length - 1]!.id)).toBe(true);
    expect(await exists("events", rows[0]!.id)).toBe(false);
    await purgeExpiredEventRows(env, NOW);
    expect(await left()).toBe(0);
  });

  it("compile jobs: finished ones past 7 days go with their PDF and input in R2", async () => {
    const acc = newId("acc");
    const job = (at: number, status: "succeeded" | "running" | "cancelled") => ({ id: newId("job", at), accountId: acc, status, engine: "pdflatex" as const, requeueAt: at, createdAt: at });
    const old = job(NOW - 8 * DAY, "succeeded");
    const oldRunning = job(NOW - 8 * DAY, "running");
    const recent = job(NOW - 6 * DAY, "succeeded");
    const oldCancelled = job(NOW - 8 * DAY, "cancelled");
    await directory().insert(compileJobs).values([old, oldRunning, recent, oldCancelled]);
    for (const j of [old, recent]) {
      await env.FILES.put(jobPdfKey(acc, j.id), "%PDF-1.5");
      await env.FILES.put(jobInputKey(acc, j.id), "{}");
    }
    await purgeExpiredJobs(env, NOW);
    expect(await exists("compile_jobs", old.id)).toBe(false);
    expect(await exists("compile_jobs", oldCancelled.id)).toBe(false);
    expect(await env.FILES.head(jobPdfKey(acc, old.id))).toBeNull();
    expect(await env.FILES.head(jobInputKey(acc, old.id))).toBeNull();
    expect(await exists("compile_jobs", oldRunning.id)).toBe(true);
    expect(await exists("compile_jobs", recent.id)).toBe(true);
    expect(await env.FILES.head(jobPdfKey(acc, recent.id))).not.toBeNull();
  });

  it("messages are kept by default and purged once configured (never a pending one)", async () => {
    const acc = newId("acc");
    const ancient = message(NOW - 400 * DAY, acc, "sent");
    const pending = message(NOW - 400 * DAY, acc, "pending");
    const recent = message(NOW - 10 * DAY, acc, "sent");
    await db().insert(messages).values([ancient, pending, recent]);
    await purgeExpiredMessages(env, NOW);
    expect(await exists("messages", ancient.id)).toBe(true);
    await purgeExpiredMessages({ ...env, RETENTION_MESSAGES_DAYS: "365" } as Env, NOW);
    expect(await exists("messages", ancient.id)).toBe(false);
    expect(await exists("messages", pending.id)).toBe(true);
    expect(await exists("messages", recent.id)).toBe(true);
  });
});
