import { log } from "../../platform/log.ts";
import { chatIdOf, digitsOfChatId } from "../chat-id.ts";
import type { MessageRow, StoredMedia } from "../messages/mapper.ts";
import type { Content } from "../messages/content.ts";
import type { TemplateSpec } from "../messages/schemas.ts";
import { isSandboxNumber } from "../network-traits.ts";
import type { ConnectResult, InboundFromNetwork, NetworkDriver, NetworkHost, NetworkSendResult, NewTemplate, OutboundMessage, TemplateResult } from "./driver.ts";

/** Numbers starting with this prefix have no account on the sandbox network (docs/contracts.md §3). */
export const NO_ACCOUNT_PREFIX = "999";

/** How long after a read receipt is due the durable alarm checks that it happened. */
const RECEIPT_BACKSTOP_MS = 5_000;
const RECEIPT_TICK_MS = 100;
/** Messages per statement batch when receipts cover a whole chat or a sweep; batches per read call. */
const READ_BATCH = 400;
/** Receipts of one status applied per change. */
const RECEIPT_BATCH = 400;
const MAX_READ_BATCHES = 250;

export function sandboxSend(message: OutboundMessage): NetworkSendResult {
  if (message.to.startsWith(NO_ACCOUNT_PREFIX)) {
    return { ok: false, error: { code: "no_account", message: "The recipient has no account on the sandbox network." } };
  }
  return { ok: true, externalId: null };
}

/** The receipts of `queue` due by `now` (at most RECEIPT_BATCH), taken off it. */
function takeDue(queue: { id: string; due: number }[], now: number): { id: string; due: number }[] {
  let n = 0;
  while (n < queue.length && queue[n]!.due <= now && n < RECEIPT_BATCH) n++;
  return queue.splice(0, n);
}

/**
 * The built-in network: accepts at once, then simulates delivered and read receipts, and hands
 * messages to the number of another sandbox session of the same account to that session.
 */
export class SandboxDriver implements NetworkDriver {
  readonly simulatesInbound = true;
  /**
   * Receipts waiting for their time, in memory: a durable write per send would hold every send's
   * answer until the write is confirmed. D1 (status + sentAt) is the durable record; a backstop
   * alarm and a sweep after a restart complete receipts lost with the memory.
   */
  private readonly receiptQueues = { delivered: [] as { id: string; due: number }[], read: [] as { id: string; due: number }[] };
  private receiptTimer: ReturnType<typeof setTimeout> | null = null;
  private receiptTimerAt = Infinity;
  private receiptsRunning: Promise<void> | null = null;
  private sweptAfterStart = false;
  /** Whether templates may be waiting for approval (unknown after a restart: the next alarm looks). */
  private templatesPending = true;

  constructor(
    private readonly phoneNumber: string,
    private readonly host: NetworkHost | null = null,
  ) {}

  async connect(): Promise<ConnectResult> {
    return { ok: true, phoneNumber: this.phoneNumber };
  }

  async send(message: OutboundMessage): Promise<NetworkSendResult> {
    return sandboxSend(message);
  }

  sendAtOnce(message: OutboundMessage): NetworkSendResult {
    return sandboxSend(message);
  }

  async afterSent(rows: MessageRow[], now: number): Promise<void> {
    // A message that reached another session of the account is read when that session reads the
    // chat (`markRead` there), as on WhatsApp; the others are read by the simulated person.
    const ids = rows.map((r) => r.id);
    this.scheduleReceipts("delivered", ids, now); // at once: delivering to peers takes a query
    let atPeers = new Set<string>();
    try {
      atPeers = await this.deliverToPeers(rows);
    } finally {
      this.scheduleReceipts(
        "read",
        ids.filter((id) => !atPeers.has(id)),
        now,
      );
    }
  }

  /**
   * The session read its chat (its last inbound message is `externalId`): the messages of the chat
   * it has not read yet, up to that one, that came from another sandbox session (named there by that session's own
   * ids, see `deliverToPeers`) become `read` at the sender, with their `message.read` events, in
   * bounded batches. Simulated inbound messages have no sender to tell.
   */
  async markRead(externalId: string): Promise<NetworkSendResult> {
    const host = this.ctx();
    const last = await host.message({ externalId });
    if (!last) return { ok: true, externalId: null };
    const now = Date.now();
    let after = "";
    for (let i = 0; i < MAX_READ_BATCHES; i++) {
      const unread = await host.unreadInbound(last.chatId, last.createdAt, after, READ_BATCH);
      if (unread.length === 0) break;
      after = unread.at(-1)!.id;
      const ids = unread.flatMap((m) => (m.externalId ? [m.externalId] : []));
      // The sender's own rows: messages of this account sent to this session's number.
      const bySender = new Map<string, string[]>();
      for (const row of await host.outboundBySession(ids)) {
        if (row.chatId !== chatIdOf(this.phoneNumber)) continue;
        bySender.set(row.sessionId, [...(bySender.get(row.sessionId) ?? []), row.id]);
      }
      for (const [sender, theirs] of bySender) await host.peerStatusChanged(sender, theirs, "read", now);
    }
    return { ok: true, externalId: null };
  }

  async onAlarm(): Promise<void> {
    await this.sweepLostReceipts();
  }

  async afterAlarm(): Promise<number | null> {
    await this.runReceipts();
    const last = this.receiptQueues.read.at(-1)?.due;
    const templates = await this.approveDueTemplates();
    const receipts = last !== undefined ? last + RECEIPT_BACKSTOP_MS : null;
    return receipts === null ? templates : templates === null ? receipts : Math.min(receipts, templates);
  }

  /**
   * The sandbox reviews a new template as Meta would, without a reviewer: PENDING, then APPROVED
   * `sandbox.templateApprovalMs` after its creation (the session's alarm, set by the create).
   */
  async createTemplate(t: NewTemplate): Promise<TemplateResult<{ externalId: string; status: string; category: string; reviewAt: number }>> {
    this.templatesPending = true;
    const id = crypto.getRandomValues(new Uint32Array(2)).join("").slice(0, 16);
    return { ok: true, value: { externalId: id, status: "PENDING", category: t.category, reviewAt: Date.now() + this.ctx().config().sandbox.templateApprovalMs } };
  }

  async deleteTemplate(): Promise<TemplateResult<null>> {
    return { ok: true, value: null };
  }

  /** Approves the templates whose review time has come; answers when the next one is due. */
  private async approveDueTemplates(): Promise<number | null> {
    if (!this.templatesPending) return null;
    const host = this.ctx();
    const delay = host.config().sandbox.templateApprovalMs;
    const pending = await host.pendingTemplates(100);
    const now = Date.now();
    let next: number | null = null;
    for (const t of pending) {
      if (t.createdAt + delay <= now) await host.templateUpdated({ name: t.name, language: t.language, status: "APPROVED", quality: "UNKNOWN" });
      else next = Math.min(next ?? Infinity, t.createdAt + delay);
    }
    // A full page may hide more: look again at the next alarm.
    this.templatesPending = next !== null || pending.length === 100;
    return pending.length === 100 ? now + 1000 : next;
  }

  stop(): void {
    this.receiptQueues.delivered.length = 0;
    this.receiptQueues.read.length = 0;
    if (this.receiptTimer !== null) clearTimeout(this.receiptTimer);
    this.receiptTimer = null;
    this.receiptTimerAt = Infinity;
  }

  private ctx(): NetworkHost {
    if (!this.host) throw new Error("the sandbox driver needs its session for receipts");
    return this.host;
  }

  /** `status` receipts for `ids` sent at `sentAt`, due after the sandbox's delay for it. */
  private scheduleReceipts(status: "delivered" | "read", ids: string[], sentAt: number): void {
    if (ids.length === 0) return;
    const { deliveredMs, readMs } = this.ctx().config().sandbox;
    const due = sentAt + (status === "delivered" ? deliveredMs : readMs);
    for (const id of ids) this.receiptQueues[status].push({ id, due });
    this.armReceiptTimer(due);
    // Durable backstop: rarely a write (only when no alarm is due before it).
    if (status === "read") void this.ctx().wakeAt(due + RECEIPT_BACKSTOP_MS);
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
      void this.runReceipts().catch((err) => log.error("sandbox receipts failed", { error: String(err) }));
    }, Math.max(0, due - Date.now()));
  }

  /** Applies every due receipt (one at a time: later calls wait for the running one). */
  private async runReceipts(): Promise<void> {
    while (this.receiptsRunning) await this.receiptsRunning;
    this.receiptsRunning = this.applyDueReceipts().finally(() => (this.receiptsRunning = null));
    await this.receiptsRunning;
  }

  private async applyDueReceipts(): Promise<void> {
    // A late tick finds a message's delivered and read receipts both due: read is stamped after
    // delivered (never the same millisecond), as the network would have sent them. Such a message
    // takes both steps in one change (a session running behind its receipts writes each row once).
    let notBefore = 0;
    for (;;) {
      const now = Math.max(Date.now(), notBefore);
      const delivered = takeDue(this.receiptQueues.delivered, now);
      const read = takeDue(this.receiptQueues.read, now);
      if (delivered.length === 0 && read.length === 0) break;
      const readIds = new Set(read.map((r) => r.id));
      const both = new Set(delivered.filter((r) => readIds.has(r.id)).map((r) => r.id));
      const steps: [string[], "delivered" | "read", number][] = [
        [delivered.filter((r) => !both.has(r.id)).map((r) => r.id), "delivered", now],
        [[...both], "read", now + 1],
        [read.filter((r) => !both.has(r.id)).map((r) => r.id), "read", now + 1],
      ];
      try {
        for (const [ids, status, at] of steps) {
          if (ids.length > 0) await this.ctx().statusChanged({ ids }, status, at, undefined, { afterSent: true, deliveredAt: now });
        }
        notBefore = now + 2;
      } catch (err) {
        // Retried whole by the next timer or the backstop alarm: a step already taken is a no-op.
        this.receiptQueues.delivered.unshift(...delivered);
        this.receiptQueues.read.unshift(...read);
        this.armReceiptTimer(Date.now() + 1000);
        throw err;
      }
    }
    const next = Math.min(this.receiptQueues.delivered[0]?.due ?? Infinity, this.receiptQueues.read[0]?.due ?? Infinity);
    if (next !== Infinity) this.armReceiptTimer(next);
  }

  /**
   * After a restart the in-memory receipts are gone: complete those of messages sent long enough
   * ago. Messages to the number of a working sandbox session of the account are only delivered: that
   * session's reader marks them read.
   */
  private async sweepLostReceipts(): Promise<void> {
    if (this.sweptAfterStart) return;
    const host = this.ctx();
    const cutoff = Date.now() - host.config().sandbox.readMs;
    let after = "";
    for (;;) {
      const stuck = await host.sentUnreadBefore(cutoff, READ_BATCH, after);
      if (stuck.length === 0) break;
      after = stuck.at(-1)!.id;
      const numbers = [...new Set(stuck.map((r) => digitsOfChatId(r.chatId)))].filter((n) => n !== this.phoneNumber && isSandboxNumber(n));
      const peers = numbers.length ? await host.peerSessions(numbers) : new Map<string, string>();
      const toPeers = stuck.filter((r) => peers.has(digitsOfChatId(r.chatId))).map((r) => r.id);
      const others = stuck.filter((r) => !peers.has(digitsOfChatId(r.chatId))).map((r) => r.id);
      if (toPeers.length) await host.statusChanged({ ids: toPeers }, "delivered", Date.now(), undefined, { afterSent: true });
      if (others.length) await host.statusChanged({ ids: others }, "read", Date.now(), undefined, { afterSent: true });
    }
    this.sweptAfterStart = true;
  }

  /**
   * How the peer knows one of our messages: one it sent us by its own id (our row's external id),
   * one we sent it by ours (its row's external id).
   */
  private async peerIdOf(messageId: string): Promise<string> {
    const row = await this.ctx().message({ id: messageId });
    return row?.direction === "inbound" && row.externalId ? row.externalId : messageId;
  }

  /** Messages to the number of another sandbox session of the same account arrive there: answers the ids that did. */
  private async deliverToPeers(rows: MessageRow[]): Promise<Set<string>> {
    const arrived = new Set<string>();
    // Only numbers in the sandbox range can belong to a session: others skip the lookup.
    const numbers = [...new Set(rows.map((r) => digitsOfChatId(r.chatId)))].filter((n) => n !== this.phoneNumber && isSandboxNumber(n));
    if (numbers.length === 0) return arrived;
    const peers = await this.ctx().peerSessions(numbers);
    for (const row of rows) {
      const peer = peers.get(digitsOfChatId(row.chatId));
      if (!peer || row.status === "failed") continue;
      const media = row.media ? (JSON.parse(row.media) as StoredMedia) : undefined;
      const content = row.content ? (JSON.parse(row.content) as Content) : undefined;
      const inbound: InboundFromNetwork = {
        externalId: row.id,
        from: this.phoneNumber,
        timestamp: Date.now(),
        type: row.type,
        ...(row.text !== null ? { text: row.text } : {}),
        ...(row.template !== null ? { template: JSON.parse(row.template) as TemplateSpec } : {}),
        // The peer gets the same file: uploaded bytes are shared (same account), a link is fetched.
        ...(media ? { media: { mimetype: media.mimetype, filename: media.filename, caption: media.caption, mediaId: media.mediaId, size: media.size, sourceUrl: media.mediaId ? null : media.url } } : {}),
        ...(content ? { content } : {}),
        ...(content?.reaction?.messageId ? { reactionToExternalId: await this.peerIdOf(content.reaction.messageId) } : {}),
      };
      if (await this.ctx().deliverToPeer(peer, inbound)) arrived.add(row.id);
    }
    return arrived;
  }
}
