import { DurableObject } from "cloudflare:workers";
import { and, eq, inArray, lte } from "drizzle-orm";
import { getDb } from "../../db/client.ts";
import { messages, messagingSessions } from "../../db/schema/index.ts";
import { enqueueEvents, prepareEvents } from "../../events/emit.ts";
import { newId } from "../../platform/ids.ts";
import { chatIdOf, digitsOfChatId } from "../chat-id.ts";
import { recordInbound } from "../messages/inbound.ts";
import { toMessage, type MessageRow, type StoredMedia } from "../messages/mapper.ts";
import type { Message, TemplateSpec } from "../messages/schemas.ts";
import { advanceStatus, ID_CHUNK } from "../messages/store.ts";
import { chunk } from "../../platform/batching.ts";
import { signedMediaUrl } from "../media/store.ts";
import type { NetworkDriver, OutboundMessage, SendResult } from "../networks/driver.ts";
import { isSandboxNumber, SandboxDriver, sandboxSend } from "../networks/sandbox.ts";
import { campaignHooks, type EnqueueOptions } from "./campaign-hooks.ts";
import { parseWebhook, verifyHubSignature, WhatsappDriver, type InboundFromNetwork } from "../networks/whatsapp.ts";
import type { Network, SessionStatus, WhatsappCredentials } from "./schemas.ts";
import { writeSessionStatus } from "./state.ts";

/** What the DO keeps about its session. Credentials live here only, never in D1. */
export interface SessionConfig {
  sessionId: string;
  accountId: string;
  network: Network;
  /** Sandbox: assigned at creation. WhatsApp: learnt on connect. */
  phoneNumber: string | null;
  credentials: WhatsappCredentials | null;
  sendRatePerMinute: number | null;
}

/** A message ready to send, built by the send service in the Worker. */
export interface Draft {
  id: string;
  to: string;
  type: OutboundMessage["type"];
  text?: string;
  template?: TemplateSpec;
  media?: StoredMedia;
  replyTo?: string | null;
  replyToExternalId?: string | null;
  batchId?: string | null;
  campaignId?: string | null;
}

export type SendOutcome =
  | { ok: true; message: Message }
  | { ok: false; code: "session_not_working"; status: SessionStatus }
  | { ok: false; code: "not_found" };
export type SimulateOutcome = { ok: true; message: Message } | { ok: false; code: "session_not_working"; status: SessionStatus } | { ok: false; code: "not_found" };
export type Outcome<T> = { ok: true; value: T } | { ok: false; code: string; message: string };
export interface HookRequest {
  method: string;
  query: Record<string, string>;
  rawBody: string;
  signature: string | null;
}

/** Attempts of a queued send that keeps hitting transient failures before it is failed. */
const MAX_ATTEMPTS = 6;
/** How long one alarm may work before yielding to a fresh alarm. */
const ALARM_BUDGET_MS = 20_000;
const JITTER = 0.25;
/** How long after a sandbox read receipt is due the durable alarm checks that it happened. */
const RECEIPT_BACKSTOP_MS = 5_000;
const RECEIPT_TICK_MS = 100;
/** Outbox rows that may be sent: not of a campaign on hold. */
const NOT_HELD = "(campaign_id IS NULL OR campaign_id NOT IN (SELECT campaign_id FROM held_campaigns))";
/**
 * Events this DO recorded are put on the events queue together, this long after the first: one
 * consumer run for many events instead of one per send (locally, each run competes with the
 * requests being answered). They are durable in D1 before that; a lost flush is enqueued by the cron.
 */
const EVENT_FLUSH_MS = 100;

/**
 * One per messaging session: the "phone". Owns the connection state machine,
 * serialises sends per chat, paces queued sends, and simulates sandbox receipts with alarms.
 */
export class SessionDO extends DurableObject<Env> {
  private config: SessionConfig | null = null;
  private status: SessionStatus = "STOPPED";
  private readonly chains = new Map<string, Promise<unknown>>();
  /**
   * Sandbox receipts waiting for their time, in memory: a durable write per send would hold every
   * send's answer until the write is confirmed. D1 (status + sentAt) is the durable record; a
   * backstop alarm and a sweep after a restart complete receipts lost with the memory.
   */
  private readonly receiptQueues = { delivered: [] as { id: string; due: number }[], read: [] as { id: string; due: number }[] };
  private receiptTimer: ReturnType<typeof setTimeout> | null = null;
  private receiptTimerAt = Infinity;
  private receiptsRunning: Promise<void> | null = null;
  private alarmAt: number | null = null;
  private sweptAfterStart = false;
  /** Outbox ids the alarm is sending right now (a cancel leaves them to finish). */
  private readonly inFlight = new Set<string>();
  /** Campaigns cancelled while the alarm may hold some of their sends in hand. */
  private readonly droppedCampaigns = new Set<string>();
  private readonly eventOutbox: string[] = [];
  private eventFlushTimer: ReturnType<typeof setTimeout> | null = null;
  private sql: SqlStorage;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
    this.sql.exec("CREATE TABLE IF NOT EXISTS outbox (message_id TEXT PRIMARY KEY, due INTEGER NOT NULL, attempts INTEGER NOT NULL DEFAULT 0)");
    this.sql.exec("CREATE INDEX IF NOT EXISTS outbox_due ON outbox (due)");
    // Campaigns: which campaign a queued send belongs to, campaigns on hold, scheduled starts.
    if (!this.sql.exec<{ name: string }>("PRAGMA table_info(outbox)").toArray().some((c) => c.name === "campaign_id")) {
      this.sql.exec("ALTER TABLE outbox ADD COLUMN campaign_id TEXT");
    }
    this.sql.exec("CREATE INDEX IF NOT EXISTS outbox_campaign ON outbox (campaign_id, due)");
    this.sql.exec("CREATE TABLE IF NOT EXISTS held_campaigns (campaign_id TEXT PRIMARY KEY)");
    this.sql.exec("CREATE TABLE IF NOT EXISTS campaign_timers (campaign_id TEXT PRIMARY KEY, due INTEGER NOT NULL)");
    void ctx.blockConcurrencyWhile(async () => {
      this.config = (await ctx.storage.get<SessionConfig>("config")) ?? null;
      this.status = (await ctx.storage.get<SessionStatus>("status")) ?? "STOPPED";
    });
  }

  // ---- state machine -------------------------------------------------------------------------

  /** First start of a new session (the D1 row exists as STARTING). */
  async start(config: SessionConfig): Promise<void> {
    this.config = config;
    await this.ctx.storage.put("config", config);
    this.status = "STARTING";
    await this.ctx.storage.put("status", "STARTING");
    await this.connectNetwork();
  }

  /** FAILED (or WORKING) -> STARTING -> WORKING | FAILED. A stopped session stays stopped. */
  async restart(): Promise<Outcome<null>> {
    if (!this.config || this.status === "STOPPED") return { ok: false, code: "session_stopped", message: "The session was deleted; create a new one." };
    await this.transition("STARTING", null);
    await this.connectNetwork();
    return { ok: true, value: null };
  }

  /** Any -> STOPPED: forget credentials, fail what is still queued. */
  async stop(): Promise<void> {
    if (!this.config) return;
    const queued = this.sql.exec<{ message_id: string }>("SELECT message_id FROM outbox").toArray().map((r) => r.message_id);
    await this.transition("STOPPED", "deleted", { credentialsSet: false });
    this.config = { ...this.config, credentials: null };
    await this.ctx.storage.put("config", this.config);
    if (queued.length) {
      await advanceStatus(this.env, this.config.accountId, this.config.sessionId, { ids: queued }, "failed", Date.now(), { code: "session_stopped", message: "The session was deleted before the message was sent." });
    }
    this.sql.exec("DELETE FROM outbox");
    this.receiptQueues.delivered.length = 0;
    this.receiptQueues.read.length = 0;
    await this.ctx.storage.deleteAlarm();
    this.alarmAt = null;
    if (this.receiptTimer !== null) clearTimeout(this.receiptTimer);
    this.receiptTimer = null;
    this.receiptTimerAt = Infinity;
  }

  private driver(): NetworkDriver {
    const cfg = this.config!;
    if (cfg.network === "whatsapp") return new WhatsappDriver(this.env.GRAPH_API_BASE_URL, cfg.credentials!);
    return new SandboxDriver(cfg.phoneNumber!);
  }

  private async connectNetwork(): Promise<void> {
    const cfg = this.config!;
    if (cfg.network === "whatsapp" && !cfg.credentials) {
      await this.transition("FAILED", "credentials_missing");
      return;
    }
    const result = await this.driver().connect();
    if (result.ok) {
      cfg.phoneNumber = result.phoneNumber || cfg.phoneNumber;
      await this.ctx.storage.put("config", cfg);
      await this.transition("WORKING", null, cfg.phoneNumber ? { phoneNumber: cfg.phoneNumber } : {});
    } else {
      await this.transition("FAILED", result.reason);
    }
  }

  private async transition(next: SessionStatus, reason: string | null, extra: { phoneNumber?: string; credentialsSet?: boolean } = {}): Promise<void> {
    const cfg = this.config!;
    const previous = this.status;
    this.status = next;
    await this.ctx.storage.put("status", next);
    await writeSessionStatus(this.env, cfg.accountId, cfg.sessionId, previous, next, reason, extra);
    const hooks = campaignHooks();
    if (hooks && previous === "WORKING" && next !== "WORKING") {
      // Campaign sends wait for the session instead of failing: their campaigns pause with a reason.
      const paused = await hooks.interrupted(this.env, cfg.sessionId, next, reason).catch((err) => {
        console.error(JSON.stringify({ level: "error", msg: "campaign pause on session down failed", error: String(err) }));
        return [] as string[];
      });
      for (const id of paused) this.sql.exec("INSERT OR IGNORE INTO held_campaigns (campaign_id) VALUES (?)", id);
    }
  }

  // ---- sending -------------------------------------------------------------------------------

  /** Sends one message now (API sends). Serialised per chat so a chat's messages keep their order. */
  async send(accountId: string, draft: Draft): Promise<SendOutcome> {
    // The DO knows its owner: checking here saves the Worker a D1 read on the hot path.
    if (!this.config || this.config.accountId !== accountId) return { ok: false, code: "not_found" };
    if (this.status !== "WORKING") return { ok: false, code: "session_not_working", status: this.status };
    return this.serial(draft.to, async () => {
      const cfg = this.config!;
      const db = getDb(this.env.DB);
      const now = Date.now();
      const base = {
        id: draft.id,
        accountId: cfg.accountId,
        sessionId: cfg.sessionId,
        chatId: chatIdOf(draft.to),
        direction: "outbound" as const,
        type: draft.type,
        text: draft.text ?? null,
        template: draft.template ? JSON.stringify(draft.template) : null,
        media: draft.media ? JSON.stringify(draft.media) : null,
        replyTo: draft.replyTo ?? null,
        batchId: draft.batchId ?? null,
        campaignId: draft.campaignId ?? null,
        createdAt: now,
      };
      if (cfg.network === "sandbox") {
        // The sandbox answers synchronously: one write with the final state.
        const result = sandboxSend(this.outbound(draft, ""));
        const row: MessageRow = {
          ...base,
          status: result.ok ? "sent" : "failed",
          errorCode: result.ok ? null : result.error.code,
          errorMessage: result.ok ? null : result.error.message,
          externalId: null,
          sentAt: result.ok ? now : null,
          deliveredAt: null,
          readAt: null,
        };
        const message = toMessage(row);
        if (result.ok) {
          // The hot path of the API: the record and its event in ONE batch (one D1 round trip,
          // atomic: never one without the other). The event is then durable, so putting it on the
          // queue need not hold the answer (see EVENT_FLUSH_MS).
          const sent = prepareEvents(this.env, { type: "message.sent", accountId: cfg.accountId, sessionId: cfg.sessionId, data: message });
          await db.batch([db.insert(messages).values(row), ...sent.statements]);
          this.queueEvents(sent.events.map((e) => e.id));
          this.scheduleReceipts([draft.id], now);
          await this.deliverToSandboxPeers([row]);
        } else {
          await db.insert(messages).values(row);
        }
        return { ok: true, message };
      }
      // Real networks: record first, so a crash after the network accepted still leaves a trace.
      await db.insert(messages).values({ ...base, status: "pending" });
      const result = await this.driver().send(await this.outboundWithMedia(draft));
      const row = await this.applySendResult(draft.id, result, now);
      return { ok: true, message: toMessage(row) };
    });
  }

  /**
   * Bulk and campaign sends: queued here, paced at the session's rate (or the campaign's), sent by
   * the alarm. Ids already queued are ignored and take no slot, so a retried enqueue is harmless.
   */
  async enqueue(messageIds: string[], opts: EnqueueOptions = {}): Promise<void> {
    if (messageIds.length === 0) return;
    const now = Date.now();
    const { rate, jitter } = this.pace(opts);
    let slot = Math.max(now, (await this.ctx.storage.get<number>("nextSlot")) ?? 0);
    const interval = rate ? 60_000 / rate : 0;
    for (const id of messageIds) {
      const offset = interval ? (Math.random() * 2 - 1) * jitter * interval : 0;
      const written = this.sql.exec("INSERT OR IGNORE INTO outbox (message_id, due, campaign_id) VALUES (?, ?, ?)", id, Math.max(now, Math.round(slot + offset)), opts.campaignId ?? null).rowsWritten;
      if (written > 0) slot += interval;
    }
    if (rate) await this.ctx.storage.put("nextSlot", slot);
    await this.ensureAlarm(now);
  }

  private pace(opts: EnqueueOptions): { rate: number | null; jitter: number } {
    return { rate: opts.perMinute ?? this.config?.sendRatePerMinute ?? null, jitter: opts.jitterPct !== undefined ? opts.jitterPct / 100 : JITTER };
  }

  // ---- campaigns ---------------------------------------------------------------------------

  /** Pause: the campaign's queued sends stay here, unsent, until released or dropped. */
  async holdCampaign(campaignId: string): Promise<void> {
    this.sql.exec("INSERT OR IGNORE INTO held_campaigns (campaign_id) VALUES (?)", campaignId);
  }

  /** Resume: its held sends are paced again from now, in their order. */
  async releaseCampaign(campaignId: string, opts: EnqueueOptions = {}): Promise<void> {
    this.sql.exec("DELETE FROM held_campaigns WHERE campaign_id = ?", campaignId);
    const now = Date.now();
    const { rate, jitter } = this.pace(opts);
    if (rate) {
      const interval = 60_000 / rate;
      let slot = Math.max(now, (await this.ctx.storage.get<number>("nextSlot")) ?? 0);
      const ids = this.sql.exec<{ message_id: string }>("SELECT message_id FROM outbox WHERE campaign_id = ? ORDER BY due, message_id", campaignId).toArray();
      for (const { message_id } of ids) {
        const offset = (Math.random() * 2 - 1) * jitter * interval;
        this.sql.exec("UPDATE outbox SET due = ? WHERE message_id = ?", Math.max(now, Math.round(slot + offset)), message_id);
        slot += interval;
      }
      await this.ctx.storage.put("nextSlot", slot);
    }
    await this.ensureAlarm(now);
  }

  /** Cancel: forgets the campaign's queued sends; answers those being sent right now (they finish). */
  async dropCampaign(campaignId: string): Promise<{ inFlight: string[] }> {
    this.droppedCampaigns.add(campaignId);
    this.sql.exec("DELETE FROM held_campaigns WHERE campaign_id = ?", campaignId);
    this.sql.exec("DELETE FROM campaign_timers WHERE campaign_id = ?", campaignId);
    const queued = this.sql.exec<{ message_id: string }>("SELECT message_id FROM outbox WHERE campaign_id = ?", campaignId).toArray();
    const inFlight: string[] = [];
    for (const { message_id } of queued) {
      if (this.inFlight.has(message_id)) inFlight.push(message_id);
      else this.sql.exec("DELETE FROM outbox WHERE message_id = ?", message_id);
    }
    return { inFlight };
  }

  /** A scheduled campaign start, fired by this DO's alarm at `at` (the cron is the backstop). */
  async scheduleCampaignStart(campaignId: string, at: number): Promise<void> {
    this.sql.exec("INSERT OR REPLACE INTO campaign_timers (campaign_id, due) VALUES (?, ?)", campaignId, at);
    await this.ensureAlarm(at);
  }

  async cancelCampaignStart(campaignId: string): Promise<void> {
    this.sql.exec("DELETE FROM campaign_timers WHERE campaign_id = ?", campaignId);
  }

  private isHeld(campaignId: string | null): boolean {
    if (!campaignId) return false;
    return this.sql.exec("SELECT 1 FROM held_campaigns WHERE campaign_id = ?", campaignId).toArray().length > 0;
  }

  private async fireCampaignTimers(): Promise<void> {
    const hooks = campaignHooks();
    const due = this.sql.exec<{ campaign_id: string }>("SELECT campaign_id FROM campaign_timers WHERE due <= ?", Date.now()).toArray();
    for (const { campaign_id } of due) {
      try {
        await hooks?.due(this.env, campaign_id);
        this.sql.exec("DELETE FROM campaign_timers WHERE campaign_id = ?", campaign_id);
      } catch (err) {
        // Kept: the next alarm (or the cron) tries again.
        console.error(JSON.stringify({ level: "error", msg: "scheduled campaign start failed", campaignId: campaign_id, error: String(err) }));
      }
    }
  }

  private async reportProgress(campaignIds: Iterable<string | null>): Promise<void> {
    const ids = [...new Set([...campaignIds].filter((id): id is string => !!id))];
    const hooks = campaignHooks();
    if (!hooks || ids.length === 0) return;
    await hooks.progressed(this.env, ids).catch((err) => console.error(JSON.stringify({ level: "error", msg: "campaign progress hook failed", error: String(err) })));
  }

  private outbound(draft: Draft, mediaLink: string): OutboundMessage {
    return {
      to: draft.to,
      type: draft.type,
      text: draft.text,
      template: draft.template,
      media: draft.media ? { link: mediaLink, caption: draft.media.caption, filename: draft.media.filename } : undefined,
      replyToExternalId: draft.replyToExternalId ?? null,
    };
  }

  private async outboundWithMedia(draft: Draft): Promise<OutboundMessage> {
    const m = draft.media;
    let link = m?.url ?? "";
    if (m?.mediaId) link = await signedMediaUrl(this.env, m.origin ?? "", m.mediaId);
    return this.outbound(draft, link);
  }

  /** Records what a real network answered to one send. */
  private async applySendResult(id: string, result: SendResult, now: number): Promise<MessageRow> {
    const cfg = this.config!;
    const db = getDb(this.env.DB);
    let changed: MessageRow[];
    if (result.ok) {
      if (result.externalId) await db.update(messages).set({ externalId: result.externalId }).where(eq(messages.id, id));
      changed = await advanceStatus(this.env, cfg.accountId, cfg.sessionId, { ids: [id] }, "sent", now);
    } else {
      changed = await advanceStatus(this.env, cfg.accountId, cfg.sessionId, { ids: [id] }, "failed", now, result.error);
      if (result.sessionFailure && this.status === "WORKING") await this.transition("FAILED", result.sessionFailure);
    }
    // The row as updated; read it only when a receipt overtook the send (nothing changed here).
    return changed[0] ?? (await db.select().from(messages).where(eq(messages.id, id)).get())!;
  }

  private serial<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const previous = this.chains.get(key) ?? Promise.resolve();
    const run = previous.then(fn, fn);
    const tail = run.then(
      () => undefined,
      () => undefined,
    );
    this.chains.set(key, tail);
    void tail.then(() => {
      if (this.chains.get(key) === tail) this.chains.delete(key);
    });
    return run;
  }

  /** Puts recorded events on the queue with the others of the next EVENT_FLUSH_MS (see there). */
  private queueEvents(ids: string[]): void {
    if (ids.length === 0) return;
    this.eventOutbox.push(...ids);
    if (this.eventFlushTimer !== null) return;
    this.eventFlushTimer = setTimeout(() => {
      this.eventFlushTimer = null;
      this.ctx.waitUntil(enqueueEvents(this.env, this.eventOutbox.splice(0)));
    }, EVENT_FLUSH_MS);
  }

  // ---- sandbox network -----------------------------------------------------------------------

  private scheduleReceipts(ids: string[], sentAt: number): void {
    if (ids.length === 0) return;
    const { deliveredMs, readMs } = this.receiptDelays();
    for (const id of ids) {
      this.receiptQueues.delivered.push({ id, due: sentAt + deliveredMs });
      this.receiptQueues.read.push({ id, due: sentAt + readMs });
    }
    this.armReceiptTimer(sentAt + deliveredMs);
    // Durable backstop: rarely a write (only when no alarm is due before it).
    void this.ensureAlarm(sentAt + readMs + RECEIPT_BACKSTOP_MS);
  }

  private receiptDelays(): { deliveredMs: number; readMs: number } {
    return { deliveredMs: Number(this.env.SANDBOX_DELIVERED_MS) || 200, readMs: Number(this.env.SANDBOX_READ_MS) || 1000 };
  }

  private armReceiptTimer(dueAt: number): void {
    // Receipts fire on a coarse tick so that a busy session applies them in batches (fewer D1 writes).
    const due = Math.ceil(dueAt / RECEIPT_TICK_MS) * RECEIPT_TICK_MS;
    if (this.receiptTimer !== null && this.receiptTimerAt <= due) return;
    if (this.receiptTimer !== null) clearTimeout(this.receiptTimer);
    this.receiptTimerAt = due;
    this.receiptTimer = setTimeout(() => {
      this.receiptTimer = null;
      this.receiptTimerAt = Infinity;
      void this.runReceipts().catch((err) => console.error(JSON.stringify({ level: "error", msg: "sandbox receipts failed", error: String(err) })));
    }, Math.max(0, due - Date.now()));
  }

  /** Applies every due receipt (one at a time: later calls wait for the running one). */
  private async runReceipts(): Promise<void> {
    while (this.receiptsRunning) await this.receiptsRunning;
    this.receiptsRunning = this.applyDueReceipts().finally(() => (this.receiptsRunning = null));
    await this.receiptsRunning;
  }

  private async applyDueReceipts(): Promise<void> {
    const cfg = this.config!;
    for (;;) {
      const now = Date.now();
      let worked = false;
      for (const status of ["delivered", "read"] as const) {
        const queue = this.receiptQueues[status];
        let n = 0;
        while (n < queue.length && queue[n]!.due <= now && n < 400) n++;
        if (n === 0) continue;
        const due = queue.splice(0, n);
        worked = true;
        try {
          await advanceStatus(this.env, cfg.accountId, cfg.sessionId, { ids: due.map((r) => r.id) }, status, now, undefined, { afterSent: true, enqueue: (ids) => this.queueEvents(ids) });
        } catch (err) {
          queue.unshift(...due); // retried by the next timer or the backstop alarm
          this.armReceiptTimer(Date.now() + 1000);
          throw err;
        }
      }
      if (!worked) break;
    }
    const next = Math.min(this.receiptQueues.delivered[0]?.due ?? Infinity, this.receiptQueues.read[0]?.due ?? Infinity);
    if (next !== Infinity) this.armReceiptTimer(next);
  }

  /** After a restart the in-memory receipts are gone: complete those of messages sent long enough ago. */
  private async sweepLostReceipts(): Promise<void> {
    const cfg = this.config!;
    if (cfg.network !== "sandbox" || this.sweptAfterStart) return;
    const { readMs } = this.receiptDelays();
    const cutoff = Date.now() - readMs;
    for (;;) {
      const stuck = await getDb(this.env.DB)
        .select({ id: messages.id })
        .from(messages)
        .where(and(eq(messages.sessionId, cfg.sessionId), inArray(messages.status, ["sent", "delivered"]), lte(messages.sentAt, cutoff)))
        .limit(400)
        .all();
      if (stuck.length === 0) break;
      await advanceStatus(this.env, cfg.accountId, cfg.sessionId, { ids: stuck.map((r) => r.id) }, "read", Date.now(), undefined, { afterSent: true });
    }
    this.sweptAfterStart = true;
  }

  /** Messages to the number of another sandbox session of the same account arrive there. */
  private async deliverToSandboxPeers(rows: MessageRow[]): Promise<void> {
    const cfg = this.config!;
    // Only numbers in the sandbox range can belong to a session: others skip the lookup.
    const numbers = [...new Set(rows.map((r) => digitsOfChatId(r.chatId)))].filter((n) => n !== cfg.phoneNumber && isSandboxNumber(n));
    if (numbers.length === 0) return;
    const peers = new Map<string, string>();
    for (const part of chunk(numbers, ID_CHUNK)) {
      const found = await getDb(this.env.DB)
        .select({ id: messagingSessions.id, phoneNumber: messagingSessions.phoneNumber })
        .from(messagingSessions)
        .where(and(eq(messagingSessions.accountId, cfg.accountId), eq(messagingSessions.network, "sandbox"), eq(messagingSessions.status, "WORKING"), inArray(messagingSessions.phoneNumber, part)))
        .all();
      for (const p of found) if (p.phoneNumber) peers.set(p.phoneNumber, p.id);
    }
    for (const row of rows) {
      const peer = peers.get(digitsOfChatId(row.chatId));
      if (!peer || row.status === "failed") continue;
      const media = row.media ? (JSON.parse(row.media) as StoredMedia) : undefined;
      const inbound: InboundFromNetwork = {
        externalId: row.id,
        from: cfg.phoneNumber!,
        timestamp: Date.now(),
        type: row.type,
        ...(row.text !== null ? { text: row.text } : {}),
        ...(row.template !== null ? { template: JSON.parse(row.template) as TemplateSpec } : {}),
        ...(media ? { media: { mimetype: media.mimetype, filename: media.filename, caption: media.caption } } : {}),
      };
      await (this.env.SESSIONS.getByName(peer) as unknown as DurableObjectStub<SessionDO>).receive(inbound);
    }
  }

  /** An inbound message from the sandbox network (another session of the account). */
  async receive(inbound: InboundFromNetwork): Promise<Outcome<boolean>> {
    if (!this.config || this.status !== "WORKING") return { ok: false, code: "session_not_working", message: "The session is not WORKING." };
    const row = await recordInbound(this.env, this.config.accountId, this.config.sessionId, inbound, { enqueue: (ids) => this.queueEvents(ids) });
    return { ok: true, value: row !== null };
  }

  /**
   * POST /api/sessions/:id/sandbox/inbound. The DO knows its owner, network and state: checking
   * here saves the Worker a D1 read.
   */
  async simulateInbound(accountId: string, from: string, text: string): Promise<SimulateOutcome> {
    const cfg = this.config;
    if (!cfg || cfg.accountId !== accountId || cfg.network !== "sandbox") return { ok: false, code: "not_found" };
    if (this.status !== "WORKING") return { ok: false, code: "session_not_working", status: this.status };
    const row = await recordInbound(this.env, cfg.accountId, cfg.sessionId, { externalId: newId("sbx"), from, timestamp: Date.now(), type: "text", text }, { enqueue: (ids) => this.queueEvents(ids) });
    return { ok: true, message: toMessage(row!) };
  }

  // ---- WhatsApp webhook ----------------------------------------------------------------------

  /** Meta's webhook for this session: verification handshake (GET) and signed events (POST). */
  async whatsappHook(req: HookRequest): Promise<{ status: number; body: string }> {
    const cfg = this.config;
    if (!cfg || cfg.network !== "whatsapp" || !cfg.credentials) return { status: 404, body: "" };
    if (req.method === "GET") {
      const ok = req.query["hub.mode"] === "subscribe" && req.query["hub.verify_token"] === cfg.credentials.verifyToken && req.query["hub.challenge"];
      return ok ? { status: 200, body: req.query["hub.challenge"]! } : { status: 403, body: "" };
    }
    if (!(await verifyHubSignature(cfg.credentials.appSecret, req.rawBody, req.signature))) return { status: 401, body: "" };
    let payload: unknown;
    try {
      payload = JSON.parse(req.rawBody);
    } catch {
      return { status: 400, body: "" };
    }
    const parsed = parseWebhook(payload, cfg.credentials.phoneNumberId);
    if (parsed.otherNumber > 0) {
      // Signed by this app but for another of its numbers: most likely the app's callback URL points here for all of them.
      console.warn(JSON.stringify({ level: "warn", msg: "whatsapp changes for another phone number skipped", sessionId: cfg.sessionId, changes: parsed.otherNumber }));
    }
    for (const m of parsed.messages) await recordInbound(this.env, cfg.accountId, cfg.sessionId, m);
    // Oldest first: with conditional updates the order does not matter for the end state, but
    // events then come out in the order the network produced them where it can.
    const statuses = parsed.statuses.sort((a, b) => a.timestamp - b.timestamp);
    for (const s of statuses) {
      await advanceStatus(this.env, cfg.accountId, cfg.sessionId, { externalIds: [s.externalId] }, s.status, s.timestamp, s.error);
    }
    return { status: 200, body: "" };
  }

  // ---- alarm: receipts and the outbox ---------------------------------------------------------

  private async ensureAlarm(due: number): Promise<void> {
    if (this.alarmAt !== null && this.alarmAt <= due) return;
    const current = await this.ctx.storage.getAlarm();
    if (current !== null && current <= due) {
      this.alarmAt = current;
      return;
    }
    this.alarmAt = due;
    await this.ctx.storage.setAlarm(due);
  }

  override async alarm(): Promise<void> {
    this.alarmAt = null;
    if (!this.config) return;
    await this.sweepLostReceipts();
    await this.fireCampaignTimers();
    const deadline = Date.now() + ALARM_BUDGET_MS;
    while (Date.now() < deadline) {
      if ((await this.processOutbox()) === 0) break;
    }
    await this.runReceipts();
    const outboxNext = this.sql.exec<{ due: number | null }>(`SELECT min(due) AS due FROM outbox WHERE ${NOT_HELD}`).one().due;
    const timerNext = this.sql.exec<{ due: number | null }>("SELECT min(due) AS due FROM campaign_timers").one().due;
    const lastReceipt = this.receiptQueues.read.at(-1)?.due;
    const next = Math.min(outboxNext ?? Infinity, timerNext ?? Infinity, lastReceipt !== undefined ? lastReceipt + RECEIPT_BACKSTOP_MS : Infinity);
    if (next !== Infinity) await this.ensureAlarm(Math.max(next, Date.now()));
  }

  private async processOutbox(): Promise<number> {
    const due = this.sql
      .exec<{ message_id: string; attempts: number; campaign_id: string | null }>(`SELECT message_id, attempts, campaign_id FROM outbox WHERE due <= ? AND ${NOT_HELD} ORDER BY due LIMIT ?`, Date.now(), ID_CHUNK)
      .toArray();
    if (due.length === 0) return 0;
    for (const r of due) this.inFlight.add(r.message_id);
    try {
      return await this.sendDue(due);
    } finally {
      for (const r of due) this.inFlight.delete(r.message_id);
      await this.reportProgress(due.map((r) => r.campaign_id));
    }
  }

  private async sendDue(due: { message_id: string; attempts: number; campaign_id: string | null }[]): Promise<number> {
    const cfg = this.config!;
    const ids = due.map((r) => r.message_id);
    const done = (list: string[]) => {
      for (const id of list) this.sql.exec("DELETE FROM outbox WHERE message_id = ?", id);
    };
    const now = Date.now();
    if (this.status !== "WORKING") {
      // Campaign sends wait (their campaigns are held and paused with the reason); others fail.
      const campaignIds = [...new Set(due.flatMap((r) => (r.campaign_id ? [r.campaign_id] : [])))];
      if (campaignIds.length) {
        for (const id of campaignIds) this.sql.exec("INSERT OR IGNORE INTO held_campaigns (campaign_id) VALUES (?)", id);
        await campaignHooks()?.interrupted(this.env, cfg.sessionId, this.status, `session_${this.status.toLowerCase()}`, campaignIds);
      }
      const others = due.filter((r) => !r.campaign_id).map((r) => r.message_id);
      if (others.length) {
        await advanceStatus(this.env, cfg.accountId, cfg.sessionId, { ids: others }, "failed", now, { code: "session_not_working", message: `The session was ${this.status} when the message was due.` });
      }
      done(others);
      return ids.length;
    }
    const rows = await getDb(this.env.DB)
      .select()
      .from(messages)
      .where(and(eq(messages.sessionId, cfg.sessionId), inArray(messages.id, ids), eq(messages.status, "pending")))
      .all();
    if (cfg.network === "sandbox") {
      const ok: string[] = [];
      const failed = new Map<string, string[]>();
      const errorsByCode = new Map<string, { code: string; message: string }>();
      for (const row of rows) {
        const result = sandboxSend({ to: digitsOfChatId(row.chatId), type: row.type });
        if (result.ok) ok.push(row.id);
        else {
          failed.set(result.error.code, [...(failed.get(result.error.code) ?? []), row.id]);
          errorsByCode.set(result.error.code, result.error);
        }
      }
      const sent = await advanceStatus(this.env, cfg.accountId, cfg.sessionId, { ids: ok }, "sent", now);
      for (const [code, list] of failed) await advanceStatus(this.env, cfg.accountId, cfg.sessionId, { ids: list }, "failed", now, errorsByCode.get(code));
      this.scheduleReceipts(
        sent.map((r) => r.id),
        now,
      );
      await this.deliverToSandboxPeers(sent);
      done(ids);
      return ids.length;
    }
    const attempts = new Map(due.map((r) => [r.message_id, r.attempts]));
    const pendingIds = new Set(rows.map((r) => r.id));
    done(ids.filter((id) => !pendingIds.has(id)));
    for (const row of rows) {
      if (this.status !== "WORKING") break;
      if (row.campaignId && this.isHeld(row.campaignId)) continue; // paused while this chunk was in hand
      if (row.campaignId && this.droppedCampaigns.has(row.campaignId)) {
        await advanceStatus(this.env, cfg.accountId, cfg.sessionId, { ids: [row.id] }, "failed", Date.now(), { code: "campaign_cancelled", message: "The campaign was cancelled before this message was sent." });
        done([row.id]);
        continue;
      }
      const draft: Draft = {
        id: row.id,
        to: digitsOfChatId(row.chatId),
        type: row.type,
        ...(row.text !== null ? { text: row.text } : {}),
        ...(row.template !== null ? { template: JSON.parse(row.template) as TemplateSpec } : {}),
        ...(row.media !== null ? { media: JSON.parse(row.media) as StoredMedia } : {}),
      };
      const result = await this.serial(draft.to, async () => this.driver().send(await this.outboundWithMedia(draft)));
      const tries = (attempts.get(row.id) ?? 0) + 1;
      if (!result.ok && result.retryAfterMs && tries < MAX_ATTEMPTS) {
        this.sql.exec("UPDATE outbox SET due = ?, attempts = ? WHERE message_id = ?", Date.now() + result.retryAfterMs * tries, tries, row.id);
        continue;
      }
      await this.applySendResult(row.id, result, Date.now());
      done([row.id]);
    }
    return ids.length;
  }
}
