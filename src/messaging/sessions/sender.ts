import { digitsOfChatId } from "../chat-id.ts";
import { toMessage, type MessageRow } from "../messages/mapper.ts";
import { messageById, pendingOfSession } from "../store/reads.ts";
import { outboundRow, type NewOutbound } from "../store/rows.ts";
import { advanceStatus } from "../store/status.ts";
import { insertMessage, setExternalId } from "../store/writes.ts";
import { groupWrite } from "../store/group-writes.ts";
import { WINDOW_CLOSED, type FailureReason, type MessageSelector, type NetworkDriver, type NetworkSendResult, type StatusTarget } from "../networks/driver.ts";
import { campaignHooks } from "./campaign-hooks.ts";
import type { DueSend, Outbox, Pacing } from "./outbox.ts";
import type { LimitState, SharedWindow } from "./limits.ts";
import type { PortfolioAnswer } from "./portfolio.ts";
import type { SendLimits } from "../send-limits.ts";
import type { SessionStatus } from "./schemas.ts";
import type { EventOrder } from "../../events/emit.ts";
import type { WriteBuffer } from "./write-buffer.ts";
import { draftOfRow, KeyedSerial, outboundWithMedia, toOutbound, type Draft, type SendOutcome, type SessionConfig } from "./types.ts";
import { accountShard } from "../../platform/shards.ts";
import { inKeyOrder } from "../../platform/batching.ts";

/** Attempts of a queued send that keeps hitting transient failures before it is failed. */
const MAX_ATTEMPTS = 6;

/** What the sender needs of its Session DO. */
export interface SenderHost {
  readonly env: Env;
  readonly outbox: Outbox;
  /** The session's sending limits and their state (the DO's SQLite). */
  readonly limitState: LimitState;
  limits(): SendLimits;
  /** The business portfolio whose messaging-limit window the session shares (null: its own window). */
  portfolio(): { admit(recipients: string[], limit: number): Promise<PortfolioAnswer> } | null;
  /** The alarm must fire by `at` (a send queued for a limit). */
  wakeAt(at: number): Promise<void>;
  /** The session's writes until their group commit (a send is answered once it is there). */
  readonly buffer: WriteBuffer;
  /** `n` changes went into the buffer (`settle`: about to change again, see GroupCommit.recorded). */
  recorded(n: number, settle?: boolean): void;
  /** The session's numbering of a status event written to D1 directly. */
  order(step: "sent" | "delivered" | "read"): EventOrder;
  /** Campaigns cancelled while the alarm may hold some of their sends in hand. */
  readonly droppedCampaigns: ReadonlySet<string>;
  config(): SessionConfig;
  status(): SessionStatus;
  driver(): NetworkDriver;
  queueEvents(ids: string[]): void;
  /** Moves messages forward where they are: the buffer's copies there, the others in D1 (the driver port's rule). */
  statusChanged(selector: MessageSelector, target: StatusTarget, at: number, error?: FailureReason): Promise<MessageRow[]>;
  /** The network says the session itself is broken. */
  fail(reason: string): Promise<void>;
}

/** The Session DO's sends: one now (API) or the outbox's due ones (alarm), through the session's driver. */
export class Sender {
  private readonly chats = new KeyedSerial();
  /** Until when the session's throughput is used up: queued sends are left due and the alarm waits for it. */
  throttledUntil = 0;

  constructor(private readonly host: SenderHost) {}

  /** Sends one message now. Serialised per chat so a chat's messages keep their order. */
  sendNow(draft: Draft): Promise<SendOutcome> {
    return this.chats.run(draft.to, async () => {
      const { env } = this.host;
      const cfg = this.host.config();
      const driver = this.host.driver();
      // A free-form send into a closed customer-service window is refused before anything is recorded.
      if (draft.type !== "template" && driver.closedWindows && (await driver.closedWindows([draft.to])).size > 0) return { ok: false, code: "reengagement_window_closed", reason: WINDOW_CLOSED.message };
      const now = Date.now();
      const base: NewOutbound = { ...draft, accountId: cfg.accountId, sessionId: cfg.sessionId, createdAt: now };
      const limits = this.host.limits();
      const outside = await this.outsideWindow(driver, draft);
      const admission = this.host.limitState.admit(limits, draft.to, outside, now, await this.sharedWindow(limits, outside ? [draft.to] : [], now));
      if (!admission.ok) {
        // Over the pair rate a chat send is refused with when to retry (queued, it would arrive out of
        // turn, minutes late); over throughput or the messaging limit it waits in the outbox.
        if (admission.limit === "pair") return { ok: false, code: "pair_rate_limited", retryAfterMs: admission.until - now };
        const row = outboundRow(base, { status: "pending" });
        await insertMessage(await accountShard(env, cfg.accountId), row);
        this.host.outbox.queueAt([row.id], admission.until, null, admission.limit === "messaging");
        await this.host.wakeAt(admission.until);
        return { ok: true, message: toMessage(row) };
      }
      if (driver.sendAtOnce) {
        // The hot path of the API: the row with its final state and its event go into the DO's
        // write buffer (durable in its storage before the answer leaves), and to D1 with the
        // session's next group commit.
        const result = driver.sendAtOnce(toOutbound(draft, ""));
        const row = outboundRow(base, result.ok ? { status: "sent", sentAt: now } : { status: "failed", error: result.error });
        const events = this.host.buffer.add(row, now);
        this.host.recorded(1 + events.length);
        if (result.ok) await driver.afterSent?.([row], now);
        return { ok: true, message: toMessage(row) };
      }
      // Networks over I/O: record first, so a crash after the network accepted still leaves a trace.
      await insertMessage(await accountShard(env, cfg.accountId), outboundRow(base, { status: "pending" }));
      const result = await driver.send(await outboundWithMedia(env, draft));
      // Meta says the pair rate was hit: the next sends to this recipient wait (or answer 429) for it.
      if (!result.ok && result.limit === "pair") this.host.limitState.pairExhausted(draft.to, Date.now());
      return { ok: true, message: toMessage(await this.applyResult(draft.id, result, now)) };
    });
  }

  /**
   * Bulk sends: their rows `pending`, queued in the outbox for the alarm to send at the session's
   * pace. On a network that answers at once the rows go into the write buffer (to D1 with the next
   * group commit, as sent if the alarm got to them first: one write each); over I/O they are in D1
   * before the call returns, as the sends there record first.
   */
  async queue(drafts: Draft[], batchId: string, pacing: Pacing): Promise<void> {
    const cfg = this.host.config();
    const now = Date.now();
    const rows = drafts.map((d) => outboundRow({ ...d, accountId: cfg.accountId, sessionId: cfg.sessionId, replyTo: null, batchId, campaignId: null, createdAt: now }, { status: "pending" }));
    if (this.host.driver().sendAtOnce) {
      this.host.buffer.queued(rows);
      this.host.recorded(rows.length, true);
    } else {
      await groupWrite(await accountShard(this.host.env, cfg.accountId), rows, []);
    }
    this.host.outbox.enqueue(rows.map((r) => r.id), pacing, null, now);
  }

  /** The due rows still `pending`: the buffer's copies (bulk rows may not be in D1 yet), the others from D1. */
  private async pendingRows(ids: string[]): Promise<MessageRow[]> {
    const cfg = this.host.config();
    const here = this.host.buffer.known(ids).filter((r) => r.sessionId === cfg.sessionId);
    const seen = new Set(here.map((r) => r.id));
    const rest = ids.filter((id) => !seen.has(id));
    const fromD1 = rest.length > 0 ? await pendingOfSession(await accountShard(this.host.env, cfg.accountId), cfg.sessionId, rest) : [];
    return [...here.filter((r) => r.status === "pending"), ...fromD1];
  }

  /** Sends the outbox's due rows (the session must be WORKING, else they wait or fail). */
  async sendDue(due: DueSend[]): Promise<void> {
    const { env, outbox } = this.host;
    const cfg = this.host.config();
    const shard = await accountShard(env, cfg.accountId);
    const ids = due.map((r) => r.message_id);
    const now = Date.now();
    if (this.host.status() !== "WORKING") return this.holdOrFail(due, now);
    const driver = this.host.driver();
    // In the outbox's order (a bulk's as given): look-ups by id answer in key order, so a chat's
    // messages went out of order, and a messaging limit counted the recipients of whichever came first.
    const found = driver.sendAtOnce ? await this.pendingRows(ids) : await pendingOfSession(shard, cfg.sessionId, ids);
    const rows = inKeyOrder(found, ids, (r) => r.id);
    const attempts = new Map(due.map((r) => [r.message_id, r.attempts]));
    if (driver.sendAtOnce) {
      // Rows from D1 (queued before a restart or long ago) are taken over by the buffer, so the
      // sends, receipts and events all go to D1 in group commits.
      const { buffer } = this.host;
      const shared = await this.sharedWindow(this.host.limits(), rows.filter((r) => r.type === "template").map((r) => digitsOfChatId(r.chatId)), now);
      const admitted = rows.filter((row) => this.admitQueued(row.id, digitsOfChatId(row.chatId), row.type === "template", attempts.get(row.id) ?? 0, now, shared));
      const ok: MessageRow[] = [];
      const failed = new Map<string, { error: FailureReason; rows: MessageRow[] }>();
      for (const row of admitted) {
        const result = driver.sendAtOnce(toOutbound(draftOfRow(row), ""));
        if (result.ok) ok.push(row);
        else failed.set(result.error.code, { error: result.error, rows: [...(failed.get(result.error.code)?.rows ?? []), row] });
      }
      // The buffer takes the rows over already sent (or failed): one write each.
      const sent = buffer.adopt(ok, "sent", now);
      let changes = sent.changed.length + sent.events.length;
      for (const f of failed.values()) changes += buffer.adopt(f.rows, "failed", now, f.error).changed.length;
      this.host.recorded(changes);
      const taken = new Set(admitted.map((r) => r.id));
      const waiting = new Set(rows.filter((r) => !taken.has(r.id)).map((r) => r.id));
      outbox.remove(ids.filter((id) => !waiting.has(id)));
      await driver.afterSent?.(sent.changed, now);
      return;
    }
    // Templates too when the messaging limit counts them: only those outside the window count.
    const tier = this.host.limits().messagingLimit !== null;
    const closed = (await driver.closedWindows?.(rows.filter((r) => tier || r.type !== "template").map((r) => digitsOfChatId(r.chatId)))) ?? new Set<string>();
    const isOutside = (row: (typeof rows)[number]) => row.type === "template" && (!driver.closedWindows || closed.has(digitsOfChatId(row.chatId)));
    // One ask of the portfolio for the whole chunk's new recipients, not one per message.
    const shared = await this.sharedWindow(this.host.limits(), rows.filter(isOutside).map((r) => digitsOfChatId(r.chatId)), now);
    const pendingIds = new Set(rows.map((r) => r.id));
    outbox.remove(ids.filter((id) => !pendingIds.has(id)));
    for (const row of rows) {
      if (this.host.status() !== "WORKING") break;
      if (row.campaignId && outbox.isHeld(row.campaignId)) continue; // paused while this chunk was in hand
      if (row.campaignId && this.host.droppedCampaigns.has(row.campaignId)) {
        await advanceStatus(env, shard, cfg.accountId, cfg.sessionId, { ids: [row.id] }, "failed", Date.now(), { code: "campaign_cancelled", message: "The campaign was cancelled before this message was sent." });
        outbox.remove([row.id]);
        continue;
      }
      const draft = draftOfRow(row);
      if (draft.type !== "template" && closed.has(draft.to)) {
        await this.applyResult(row.id, { ok: false, error: WINDOW_CLOSED }, Date.now());
        outbox.remove([row.id]);
        continue;
      }
      if (!this.admitQueued(row.id, draft.to, isOutside(row), attempts.get(row.id) ?? 0, Date.now(), shared)) continue;
      const result = await this.chats.run(draft.to, async () => driver.send(await outboundWithMedia(env, draft)));
      const tries = (attempts.get(row.id) ?? 0) + 1;
      if (!result.ok && result.retryAfterMs && tries < (result.maxAttempts ?? MAX_ATTEMPTS)) {
        if (result.limit === "pair") this.host.limitState.pairExhausted(draft.to, Date.now());
        // Backing off as Meta asks: the wait doubles with each refusal.
        outbox.retryLater(row.id, Date.now() + result.retryAfterMs * 2 ** (tries - 1), tries);
        continue;
      }
      await this.applyResult(row.id, result, Date.now());
      outbox.remove([row.id]);
    }
  }

  /** A queued send the limits allow now (counted); else it waits in the outbox until they do. */
  private admitQueued(id: string, to: string, outsideWindow: boolean, attempts: number, now: number, shared: SharedWindow | undefined): boolean {
    const admission = this.host.limitState.admit(this.host.limits(), to, outsideWindow, now, shared);
    if (admission.ok) return true;
    // Over throughput the row stays due (rewriting every row of a large backlog each second would cost
    // the square of its size); the alarm comes back when the next second begins.
    if (admission.limit === "throughput") this.throttledUntil = Math.max(this.throttledUntil, admission.until);
    else this.host.outbox.retryLater(id, admission.until, attempts, admission.limit === "messaging");
    return false;
  }

  /**
   * The portfolio's answer for these business-initiated recipients, asked only for those this session
   * has not reached in the window (undefined: the session keeps its own window, or has no limit).
   */
  private async sharedWindow(limits: SendLimits, recipients: string[], now: number): Promise<SharedWindow | undefined> {
    const portfolio = limits.messagingLimit === null ? null : this.host.portfolio();
    if (!portfolio) return undefined;
    const unknown = this.host.limitState.unknownOf(recipients, now);
    if (unknown.length === 0) return { admitted: new Set(), until: now };
    const answer = await portfolio.admit(unknown, limits.messagingLimit!);
    return { admitted: new Set(answer.admitted), until: answer.until };
  }

  /** Whether a send is business-initiated (counts toward the messaging limit): a template to a closed window. */
  private async outsideWindow(driver: NetworkDriver, draft: Draft): Promise<boolean> {
    if (draft.type !== "template" || this.host.limits().messagingLimit === null) return false;
    return !driver.closedWindows || (await driver.closedWindows([draft.to])).has(draft.to);
  }

  /** Due sends while the session is down: campaign sends wait (their campaigns held and paused with the reason); others fail. */
  private async holdOrFail(due: DueSend[], now: number): Promise<void> {
    const cfg = this.host.config();
    const status = this.host.status();
    const campaignIds = [...new Set(due.flatMap((r) => (r.campaign_id ? [r.campaign_id] : [])))];
    if (campaignIds.length) {
      this.host.outbox.hold(campaignIds);
      await campaignHooks().interrupted(this.host.env, cfg.accountId, cfg.sessionId, status, `session_${status.toLowerCase()}`, campaignIds);
    }
    const others = due.filter((r) => !r.campaign_id).map((r) => r.message_id);
    if (others.length) {
      // Rows the buffer holds (a bulk's, maybe not in D1 yet) fail there, the others in D1.
      await this.host.statusChanged({ ids: others }, "failed", now, { code: "session_not_working", message: `The session was ${status} when the message was due.` });
    }
    this.host.outbox.remove(others);
  }

  /** Records what a network over I/O answered to one send. */
  private async applyResult(id: string, result: NetworkSendResult, now: number): Promise<MessageRow> {
    const { env } = this.host;
    const cfg = this.host.config();
    const shard = await accountShard(env, cfg.accountId);
    let changed: MessageRow[];
    if (result.ok) {
      if (result.externalId) await setExternalId(shard, id, result.externalId);
      changed = await advanceStatus(env, shard, cfg.accountId, cfg.sessionId, { ids: [id] }, "sent", now, undefined, { order: this.host.order });
    } else {
      changed = await advanceStatus(env, shard, cfg.accountId, cfg.sessionId, { ids: [id] }, "failed", now, result.error);
      if (result.sessionFailure && this.host.status() === "WORKING") await this.host.fail(result.sessionFailure);
    }
    // The row as updated; read it only when a receipt overtook the send (nothing changed here).
    return changed[0] ?? (await messageById(shard, id))!;
  }
}
