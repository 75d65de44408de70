import { DurableObject } from "cloudflare:workers";
import { enqueueEvents } from "../../events/emit.ts";
import { FanOutNow } from "../../events/fan-out-now.ts";
import type { EventRecord } from "../../events/types.ts";
import { newId } from "../../platform/ids.ts";
import { accountShard, type Shard } from "../../platform/shards.ts";
import { countInto, takeUsage, usageFields, type UsageByDb } from "../../platform/d1-usage.ts";
import { log } from "../../platform/log.ts";
import { fetchInboundMedia, MediaFetcher, type FetchOutcome } from "../media/inbound.ts";
import { toMessage, type MessageRow } from "../messages/mapper.ts";
import type { HookRequest, InboundBody, InboundFromNetwork, NetworkDriver, NetworkHost } from "../networks/driver.ts";
import { createDriver } from "../networks/index.ts";
import { advanceStatus } from "../store/status.ts";
import { campaignHooks, type EnqueueOptions } from "./campaign-hooks.ts";
import { recordInboundBatch, type InboundResult } from "./inbound.ts";
import { Coalescer } from "./coalesce.ts";
import { networkHost } from "./network-host.ts";
import { Outbox, type Pacing } from "./outbox.ts";
import { OutboxRunner } from "./outbox-runner.ts";
import { LimitChanges } from "./limit-changes.ts";
import { LimitState } from "./limits.ts";
import { SeenKeys } from "./seen-keys.ts";
import { limitsFor, type SendLimitsInput } from "../send-limits.ts";
import type { SessionStatus } from "./schemas.ts";
import { GroupCommit } from "./group-commit.ts";
import { Sender } from "./sender.ts";
import { SessionTemplates, type TemplateOp, type TemplateOpResult } from "./templates.ts";
import { writeSessionStatus } from "./state.ts";
import { statusOrder, WriteBuffer, type Selector, type Target } from "./write-buffer.ts";
import { EventFlush } from "./event-flush.ts";
import { type Draft, type MessageOutcome, type QueueOutcome, type RpcResult, type SendOutcome, type SessionConfig } from "./types.ts";

const JITTER = 0.25;
/** Inbound messages recorded in one D1 round trip at most. */
const INBOUND_BATCH = 50;
/**
 * Events this DO recorded are put on the events queue together, this long after the first: one
 * consumer run for many events instead of one per send (locally, each run competes with the
 * requests being answered). They are durable in D1 before that; a lost flush is enqueued by the cron.
 */
const EVENT_FLUSH_MS = 100;

/**
 * One per messaging session: the "phone". Owns the connection state machine and serialises sends
 * per chat; queued sends live in its Outbox, and what a network adds (receipts, webhooks) in its driver.
 * src/index.ts wires it to campaigns (wireCampaignHooks).
 */
export class SessionDO extends DurableObject<Env> {
  private config: SessionConfig | null = null;
  private status: SessionStatus = "STOPPED";
  private readonly outbox: Outbox;
  private readonly limitState: LimitState;
  private readonly seen: SeenKeys;
  private readonly sender: Sender;
  private net: NetworkDriver | null = null;
  private hostPort: NetworkHost | null = null;
  private alarmAt: number | null = null;
  /** The last alarm change under way (ensureAlarm runs them one after another). */
  private alarmSetting: Promise<void> = Promise.resolve();
  /** The alarm's work: due campaign starts and the outbox's due sends. */
  private readonly runner: OutboxRunner;
  /** Campaigns cancelled while the alarm may hold some of their sends in hand. */
  private readonly droppedCampaigns = new Set<string>();
  /** Inbound files being fetched at once (the queue's `media` job is the backstop). */
  private readonly media = new MediaFetcher((id) => this.fetchMedia(id, false));
  /** D1 work of sends, commits and alarms since the last flush, logged with it. */
  private readonly usage: UsageByDb = {};
  /** This session's webhooks' first attempts for its inbound messages, made here (the queue takes the overflow). */
  private fanOutOf: FanOutNow | null = null;
  private readonly events = new EventFlush((ids) => this.ctx.waitUntil(this.flushEvents(ids)), EVENT_FLUSH_MS);
  /** This session's writes (messages, receipts, their events), committed to D1 in groups. */
  private readonly buffer: WriteBuffer;
  private readonly commits: GroupCommit;
  /** The account's shard, resolved once per DO (an account never changes shard); a failed look is retried. */
  private shardOf: Promise<Shard> | null = null;
  /** Limit changes one after another, so D1's copy is written in the order the object merged them. */
  private readonly limitChanges: LimitChanges;
  /** The session's message templates (its network's, cached in D1). */
  private readonly templateOps: SessionTemplates;
  /** Inbound messages arriving while others are being recorded are recorded together next (one D1 round trip). */
  private readonly inbound = new Coalescer<InboundFromNetwork, InboundResult>((list) => this.recordInbound(list), INBOUND_BATCH);

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.outbox = new Outbox(ctx.storage.sql);
    this.limitState = new LimitState(ctx.storage.sql);
    this.seen = new SeenKeys(ctx.storage.sql);
    this.buffer = new WriteBuffer(ctx.storage.sql);
    this.commits = new GroupCommit({
      env,
      buffer: this.buffer,
      wakeAt: (at) => this.ensureAlarm(at),
      shard: () => this.shard(),
      committed: (rows, events) => log.info("session commit", { sessionId: this.config?.sessionId ?? null, rows, events, ...usageFields(takeUsage(this.usage)) }),
    });
    this.sender = new Sender({
      env,
      outbox: this.outbox,
      limitState: this.limitState,
      limits: () => limitsFor(this.config!.network, this.config!.limits),
      portfolio: () => this.limitChanges.portfolio(),
      wakeAt: (at) => this.ensureAlarm(at),
      buffer: this.buffer,
      recorded: (n, settle) => this.commits.recorded(n, settle),
      order: (step) => statusOrder(this.buffer, step),
      droppedCampaigns: this.droppedCampaigns,
      config: () => this.config!,
      status: () => this.status,
      driver: () => this.driver(),
      queueEvents: (ids) => this.queueEvents(ids),
      statusChanged: (selector, target, at, error) => this.port().statusChanged(selector, target, at, error),
      fail: (reason) => this.transition("FAILED", reason),
    });
    this.limitChanges = new LimitChanges({
      env,
      config: () => this.config,
      status: () => this.status,
      saveConfig: async (config) => {
        // Not setConfig: the driver (and the timers it holds) stays; only the limits change.
        this.config = config;
        await ctx.storage.put("config", config);
      },
      wakeHeldSends: async (now) => {
        this.sender.throttledUntil = 0;
        this.outbox.wakeLimitWaits(now);
        await this.ensureAlarm(now);
      },
    });
    this.runner = new OutboxRunner({
      env,
      outbox: this.outbox,
      sender: this.sender,
      accountId: () => this.config!.accountId,
      commit: () => this.commits.flush(),
    });
    this.templateOps = new SessionTemplates({
      env,
      identity: () => ({ accountId: this.config!.accountId, sessionId: this.config!.sessionId }),
      shard: () => this.shard(),
      driver: () => this.driver(),
      wakeAt: (at) => this.ensureAlarm(at),
    });
    void ctx.blockConcurrencyWhile(async () => {
      this.config = (await ctx.storage.get<SessionConfig>("config")) ?? null;
      this.status = (await ctx.storage.get<SessionStatus>("status")) ?? "STOPPED";
      // The pacing slot used to be a storage key: carried over into the outbox once.
      const legacySlot = await ctx.storage.get<number>("nextSlot");
      if (legacySlot !== undefined) {
        this.outbox.setNextSlot(legacySlot);
        await ctx.storage.delete("nextSlot");
      }
    });
  }

  /** Sequence numbers for `n` events of this session recorded elsewhere (`messaging/sequence.ts`): the first of them. */
  async sequences(n: number): Promise<number> {
    return this.buffer.takeSequences(Math.min(1000, Math.max(1, Math.floor(n) || 1)));
  }

  // ---- state machine -------------------------------------------------------------------------

  /** First start of a new session (the D1 row exists as STARTING). */
  async start(config: SessionConfig): Promise<void> {
    await this.setConfig(config);
    this.status = "STARTING";
    await this.ctx.storage.put("status", "STARTING");
    await this.connectNetwork();
  }

  /** FAILED (or WORKING) -> STARTING -> WORKING | FAILED. A stopped session stays stopped. */
  async restart(): Promise<RpcResult<null>> {
    if (!this.config || this.status === "STOPPED") return { ok: false, code: "session_stopped", message: "The session was deleted; create a new one." };
    await this.transition("STARTING", null);
    await this.connectNetwork();
    return { ok: true, value: null };
  }

  /** Any -> STOPPED: forget credentials, fail what is still queued. */
  async stop(): Promise<void> {
    if (!this.config) return;
    await this.commits.flush();
    const queued = this.outbox.queuedIds();
    await this.transition("STOPPED", "deleted", { credentialsSet: false });
    this.net?.stop?.();
    await this.setConfig({ ...this.config, credentials: null });
    if (queued.length) {
      await advanceStatus(this.env, await this.shard(), this.config.accountId, this.config.sessionId, { ids: queued }, "failed", Date.now(), { code: "session_stopped", message: "The session was deleted before the message was sent." });
    }
    this.outbox.clear();
    await this.ctx.storage.deleteAlarm();
    this.alarmAt = null;
  }

  /**
   * PATCH /api/sessions/:id: the session's limits from now (the service validated and merged them). Queued
   * sends are admitted against them as they come due, so a lower throughput slows what is already queued.
   */
  setLimits(accountId: string, patch: SendLimitsInput): Promise<SendLimitsInput | null> {
    return this.limitChanges.set(accountId, patch);
  }

  /** The business portfolio this session shares its messaging limit with (null: none), if it is the account's. */
  async portfolioId(accountId: string): Promise<string | null> {
    return this.limitChanges.portfolioId(accountId);
  }

  /** Meta's tier is the portfolio's: a tier set on another session of the portfolio is this one's too. */
  async portfolioTier(accountId: string, portfolio: string, messagingLimit: number | "unlimited"): Promise<boolean> {
    return this.limitChanges.portfolioTier(accountId, portfolio, messagingLimit);
  }

  private async setConfig(config: SessionConfig): Promise<void> {
    this.config = config;
    this.net = null;
    await this.ctx.storage.put("config", config);
  }

  private driver(): NetworkDriver {
    const cfg = this.config!;
    return (this.net ??= createDriver(this.port(), cfg.network, cfg.phoneNumber, cfg.credentials));
  }

  /** The DO's side of the driver port (what drivers report is recorded through it). */
  private port(): NetworkHost {
    return (this.hostPort ??= networkHost({
      env: this.env,
      identity: () => ({ accountId: this.config!.accountId, sessionId: this.config!.sessionId, phoneNumber: this.config!.phoneNumber, network: this.config!.network }),
      queueEvents: (ids) => this.queueEvents(ids),
      fetchMediaNow: (id) => this.media.add(id),
      wakeAt: (at) => this.ensureAlarm(at),
      peer: (id) => sessionStub(this.env, id),
      received: (m) => this.record(m),
      advanceBuffered: (selector, target, at, error, deliveredAt) => {
        const done = this.buffer.advance(selector, target, at, error, { deliveredAt });
        this.commits.recorded(done.changed.length + done.events.length);
        return done;
      },
      order: (step) => statusOrder(this.buffer, step),
      sequences: (n) => this.buffer.takeSequences(n),
      commit: () => this.commits.flush(),
      recipientMoved: (from, to) => this.limitState.renameRecipient(from, to),
      seen: this.seen,
      templateUpdated: (update) => this.templateOps.updated(update),
    }));
  }

  private async connectNetwork(): Promise<void> {
    const cfg = this.config!;
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
    if (previous === "WORKING" && next !== "WORKING") {
      // Campaign sends wait for the session instead of failing: their campaigns pause with a reason.
      const paused = await campaignHooks().interrupted(this.env, cfg.accountId, cfg.sessionId, next, reason).catch((err) => {
        log.error("campaign pause on session down failed", { error: String(err) });
        return [] as string[];
      });
      this.outbox.hold(paused);
    }
  }

  // ---- sending -------------------------------------------------------------------------------

  /** Sends one message now (API sends). Serialised per chat so a chat's messages keep their order. */
  async send(accountId: string, draft: Draft): Promise<SendOutcome> {
    return countInto(this.usage, () => this.sendCounted(accountId, draft));
  }

  private async sendCounted(accountId: string, draft: Draft): Promise<SendOutcome> {
    return this.refusal(accountId) ?? this.sender.sendNow(draft);
  }

  /**
   * Why a send of `accountId` is refused here, or null. The DO knows its owner: checking here saves the
   * Worker a D1 read on the hot path.
   */
  private refusal(accountId: string): Exclude<QueueOutcome, { ok: true }> | null {
    if (!this.config || this.config.accountId !== accountId) return { ok: false, code: "not_found" };
    if (this.status !== "WORKING") return { ok: false, code: "session_not_working", status: this.status };
    if (this.commits.overloaded()) return { ok: false, code: "busy" };
    return null;
  }

  /**
   * A bulk send's messages: their rows kept here (`pending`) and queued, sent by the alarm at the
   * session's pace. Answered once they are durable in this object's storage.
   */
  async queueBulk(accountId: string, drafts: Draft[], batchId: string): Promise<QueueOutcome> {
    const refused = this.refusal(accountId);
    if (refused) return refused;
    if (drafts.length === 0) return { ok: true };
    await this.sender.queue(drafts, batchId, this.pacing({}));
    await this.ensureAlarm(Date.now());
    return { ok: true };
  }

  /**
   * Bulk and campaign sends: queued here, paced at the session's rate (or the campaign's), sent by
   * the alarm. Ids already queued are ignored and take no slot, so a retried enqueue is harmless.
   */
  async enqueue(messageIds: string[], opts: EnqueueOptions = {}): Promise<void> {
    if (messageIds.length === 0) return;
    const now = Date.now();
    this.outbox.enqueue(messageIds, this.pacing(opts), opts.campaignId ?? null, now);
    await this.ensureAlarm(now);
  }

  private pacing(opts: EnqueueOptions): Pacing {
    return { rate: opts.perMinute ?? this.config?.sendRatePerMinute ?? null, jitter: opts.jitterPct !== undefined ? opts.jitterPct / 100 : JITTER };
  }

  // ---- campaigns ---------------------------------------------------------------------------

  /** Pause: the campaign's queued sends stay here, unsent, until released or dropped. */
  async holdCampaign(campaignId: string): Promise<void> {
    this.outbox.hold([campaignId]);
  }

  /** Resume: its held sends are paced again from now, in their order. */
  async releaseCampaign(campaignId: string, opts: EnqueueOptions = {}): Promise<void> {
    const now = Date.now();
    this.outbox.release(campaignId, this.pacing(opts), now);
    await this.ensureAlarm(now);
  }

  /**
   * When a running campaign's queued sends should all be through, by its pacing and the session's
   * limits (the messaging limit counts every one as a new recipient outside its window: the latest it
   * can be). Null: none queued here, or the campaign is on hold.
   */
  async campaignFinish(accountId: string, campaignId: string): Promise<number | null> {
    if (!this.config || this.config.accountId !== accountId || this.outbox.isHeld(campaignId)) return null;
    const { queued, lastDue } = this.outbox.campaignQueue(campaignId);
    if (queued === 0 || lastDue === null) return null;
    const limits = limitsFor(this.config.network, this.config.limits);
    // A shared portfolio window: what its other sessions reached counts against this campaign too.
    const portfolio = limits.messagingLimit === null ? null : this.limitChanges.portfolio();
    return this.limitState.finishEstimate(limits, queued, lastDue, Date.now(), portfolio ? await portfolio.state() : undefined);
  }

  /** Cancel: forgets the campaign's queued sends; answers those being sent right now (they finish). */
  async dropCampaign(campaignId: string): Promise<{ inFlight: string[] }> {
    this.droppedCampaigns.add(campaignId);
    return { inFlight: this.outbox.drop(campaignId, this.runner.inFlight) };
  }

  /** A scheduled campaign start, fired by this DO's alarm at `at` (the cron is the backstop). */
  async scheduleCampaignStart(campaignId: string, at: number): Promise<void> {
    this.outbox.setTimer(campaignId, at);
    await this.ensureAlarm(at);
  }

  /** The scheduled start was cancelled or moved. */
  async cancelCampaignStart(campaignId: string): Promise<void> {
    this.outbox.cancelTimer(campaignId);
  }

  /** Puts recorded events (ids, or records with their content) on the queue with the others of the next EVENT_FLUSH_MS (see there). */
  private queueEvents(items: (string | EventRecord)[]): void {
    this.events.add(items);
  }

  /**
   * The flush: events recorded with their content (inbound messages) are fanned out here, at once
   * (events/fan-out-now.ts); those by id go to the queue (with their shard). The D1 work since the
   * last flush is logged.
   */
  private async flushEvents(items: (string | EventRecord)[]): Promise<void> {
    const cfg = this.config;
    log.info("session flush", { sessionId: cfg?.sessionId ?? null, events: items.length, ...usageFields(takeUsage(this.usage)) });
    if (!cfg) return;
    // Never throws: events whose flush fails are recorded in D1 and the cron enqueues them.
    const shard = await this.shard().catch((err: unknown) => void log.error("session flush: shard unknown; the cron will enqueue", { sessionId: cfg.sessionId, error: String(err) }));
    if (!shard) return;
    const ids = items.filter((i): i is string => typeof i === "string");
    const records = items.filter((i): i is EventRecord => typeof i !== "string");
    await Promise.all([ids.length > 0 ? enqueueEvents(this.env, shard, ids) : null, records.length > 0 ? this.fanOut.run(shard, records) : null]);
  }

  private get fanOut(): FanOutNow {
    return (this.fanOutOf ??= new FanOutNow(this.env, { sessionId: this.config?.sessionId ?? null }));
  }

  /** The shard of this session's account: where its group commits go. */
  private shard(): Promise<Shard> {
    const cfg = this.config;
    if (!cfg) return Promise.reject(new Error("session has no config"));
    return (this.shardOf ??= accountShard(this.env, cfg.accountId).catch((err: unknown) => {
      this.shardOf = null;
      throw err;
    }));
  }

  /**
   * Read your writes: a read of this session's messages first has its buffered writes committed.
   * Cheaper than reads consulting the buffer: reads are far fewer than writes, a commit with nothing
   * waiting costs no D1 statement, and every read path (history, chats, batches, search) stays one
   * D1 query instead of a merge of two sources.
   */
  async flushWrites(): Promise<void> {
    await countInto(this.usage, () => this.commits.flush());
  }

  /** A receipt from another sandbox session of the account (it read our messages): applied here, where the rows are buffered. */
  async peerReceipt(ids: string[], target: Target, at: number): Promise<void> {
    if (!this.config) return;
    await this.port().statusChanged({ ids } satisfies Selector, target, at, undefined, { afterSent: true });
  }

  // ---- inbound -------------------------------------------------------------------------------

  /** An inbound message from the sandbox network (another session of the account). */
  async receive(inbound: InboundFromNetwork): Promise<RpcResult<boolean>> {
    if (!this.config || this.status !== "WORKING") return { ok: false, code: "session_not_working", message: "The session is not WORKING." };
    return { ok: true, value: (await this.record(inbound)) !== null };
  }

  /** POST /api/sessions/:id/sandbox/inbound. The DO knows its owner, network and state: checking here saves the Worker a D1 read. */
  async simulateInbound(accountId: string, from: string, body: InboundBody): Promise<MessageOutcome> {
    const cfg = this.config;
    if (!cfg || cfg.accountId !== accountId || !this.driver().simulatesInbound) return { ok: false, code: "not_found" };
    if (this.status !== "WORKING") return { ok: false, code: "session_not_working", status: this.status };
    const row = await this.record({ ...body, externalId: newId("sbx"), from, timestamp: Date.now() });
    return { ok: true, message: toMessage(row!) };
  }

  /** One inbound message recorded, with the others arriving meanwhile: its row (null: a replay); throws what kept it out. */
  private async record(m: InboundFromNetwork): Promise<MessageRow | null> {
    const result = await this.inbound.add(m);
    if (!result.ok) throw result.error;
    return result.row;
  }

  private async recordInbound(list: InboundFromNetwork[]): Promise<InboundResult[]> {
    const cfg = this.config!;
    // They may name our recent messages (reply, reaction): those must be in D1 first.
    await this.commits.flush();
    return recordInboundBatch(this.env, cfg.accountId, cfg.sessionId, list, { enqueue: (records) => this.queueEvents(records), fetchNow: (id) => this.media.add(id), sequences: (n) => this.buffer.takeSequences(n) });
  }

  /** A `media` job: one attempt at storing an inbound message's file (the driver holds the credentials). */
  async fetchMedia(messageId: string, lastAttempt: boolean): Promise<FetchOutcome> {
    if (!this.config) return { ok: false, reason: "The session no longer exists.", transient: false };
    return fetchInboundMedia(this.env, this.driver(), this.config.accountId, messageId, lastAttempt);
  }

  /** POST /api/chats/{chatId}/read: the network is told that the chat was read up to `externalId`. */
  async markRead(accountId: string, externalId: string): Promise<{ ok: true } | { ok: false; code: string; message: string; retry?: boolean }> {
    if (!this.config || this.config.accountId !== accountId) return { ok: false, code: "not_found", message: "No session was found at this address." };
    if (this.status !== "WORKING") return { ok: false, code: "session_not_working", message: `The session is ${this.status}; it must be WORKING to mark messages read.` };
    const res = await this.driver().markRead?.(externalId);
    if (!res || res.ok) return { ok: true };
    return { ok: false, code: res.error.code, message: res.error.message, retry: res.retryAfterMs !== undefined };
  }

  /** The session's templates at its network: sync, create, delete (templates/service.ts); the session must be WORKING. */
  async templates(accountId: string, op: TemplateOp): Promise<TemplateOpResult> {
    if (!this.config || this.config.accountId !== accountId) return { ok: false, code: "not_found", message: "No session was found at this address.", status: 404 };
    if (this.status !== "WORKING") return { ok: false, code: "session_not_working", message: `The session is ${this.status}; it must be WORKING.`, status: 409 };
    return this.templateOps.run(op);
  }

  /** The network's webhook for this session (Meta's, for WhatsApp); 404 where the network has none. */
  async whatsappHook(req: HookRequest): Promise<{ status: number; body: string }> {
    if (!this.config) return { status: 404, body: "" };
    return (await this.driver().webhook?.(req)) ?? { status: 404, body: "" };
  }

  // ---- alarm: the outbox and the network's timers -------------------------------------------

  /**
   * Makes sure the alarm fires by `due`. One at a time: two that overlap would each read the alarm
   * before the other set it, and a later `due` that read second would overwrite an earlier one: the
   * work due first would wait for the later time (the group commit's 2 s backstop is one such call).
   */
  private ensureAlarm(due: number): Promise<void> {
    // Already due by then (a call still under way only makes it sooner).
    if (this.alarmAt !== null && this.alarmAt <= due) return Promise.resolve();
    const run = this.alarmSetting.then(() => this.setAlarmBy(due));
    this.alarmSetting = run.catch(() => {});
    return run;
  }

  private async setAlarmBy(due: number): Promise<void> {
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
    await countInto(this.usage, () => this.runAlarm());
  }

  private async runAlarm(): Promise<void> {
    this.alarmAt = null;
    // Buffered writes first: after a restart they are what the timer never committed.
    await this.commits.flush();
    if (!this.config) return;
    const driver = this.driver();
    await driver.onAlarm?.();
    await this.runner.run();
    const networkNext = (await driver.afterAlarm?.()) ?? null;
    const next = Math.min(this.outbox.nextDue() ?? Infinity, networkNext ?? Infinity);
    // Sends left due for the throughput limit wait for its next second (a network timer may wait with them, < 1 s).
    const throttled = this.sender.throttledUntil > Date.now() && this.outbox.nextDue() !== null ? this.sender.throttledUntil : 0;
    if (next !== Infinity) await this.ensureAlarm(Math.max(next, Date.now(), throttled));
  }
}

/** The Durable Object of a session, typed: the one way to reach one (one per session id). */
export function sessionStub(env: Env, sessionId: string): DurableObjectStub<SessionDO> {
  return env.SESSIONS.getByName(sessionId) as unknown as DurableObjectStub<SessionDO>;
}
