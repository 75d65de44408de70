import { config } from "../../platform/config.ts";
import { chunk } from "../../platform/batching.ts";
import type { FailureReason, InboundFromNetwork, NetworkHost, TemplateUpdate } from "../networks/driver.ts";
import { phonesByUserIds, setOptedOutByPhone } from "../contacts/service.ts";
import { BACKSTOP_DELAY_S, enqueueMediaFetch } from "../media/inbound.ts";
import { recordCall, recordEcho } from "./echoes-calls.ts";
import type { SeenKeys } from "./seen-keys.ts";
import { recordIdentityChange, recordNumberKnown } from "./identity.ts";
import { pendingTemplates } from "../store/templates.ts";
import type { MessageRow, StoredMedia } from "../messages/mapper.ts";
import { lastInboundSince } from "../store/chats.ts";
import { addNetworkDetail, editInbound, revokeInbound } from "../store/edits.ts";
import { ID_CHUNK, messageByExternalId, messageById, messagesByIdsQuery, unreadInboundOfChat, unreadSentBefore } from "../store/reads.ts";
import { advanceStatus } from "../store/status.ts";
import type { Network } from "./schemas.ts";
import { workingSessionsByNumber, writeSessionHealth } from "./state.ts";
import { accountShard } from "../../platform/shards.ts";
import type { EventOrder } from "../../events/emit.ts";
import type { Advanced, Selector, Target } from "./write-buffer.ts";

/** What the Session DO lends to the port it implements for its driver. */
export interface HostParts {
  readonly env: Env;
  identity(): { accountId: string; sessionId: string; phoneNumber: string | null; network: Network };
  /** Records an inbound message (with others arriving meanwhile): its row, null for a replay. */
  received(m: InboundFromNetwork): Promise<MessageRow | null>;
  /** The DO's one event sink: recorded events go to the queue with its next flush. */
  queueEvents(ids: string[]): void;
  fetchMediaNow(messageId: string): void;
  wakeAt(at: number): Promise<void>;
  /** Another session of the account, as the network reaches it. */
  peer(sessionId: string): { receive(inbound: InboundFromNetwork): Promise<{ ok: boolean }>; peerReceipt(ids: string[], target: Target, at: number): Promise<void> };
  /** Receipts of the messages the DO's write buffer knows, applied there; the other keys come back `unknown`. */
  advanceBuffered(selector: Selector, target: Target, at: number, error?: FailureReason, deliveredAt?: number): Advanced;
  /** The session's numbering of a status event written to D1 directly. */
  order(step: "sent" | "delivered" | "read"): EventOrder;
  /** The first of `n` event numbers of the session (for events recorded here, written to D1 directly). */
  sequences(n: number): number;
  /** A template change the network reported (sessions/templates.ts). */
  templateUpdated(update: TemplateUpdate): Promise<boolean>;
  /** Commits the write buffer: what reads or updates D1 rows of this session by key needs them there. */
  commit(): Promise<void>;
  /** A person's address changed (number change, number now known): the session's counters keyed by it follow. */
  recipientMoved(from: string, to: string): void;
  /** Notices already acted on (a replayed call). */
  readonly seen: Pick<SeenKeys, "claim" | "release">;
}

/** The Session DO's side of the driver port: what drivers report is recorded here, what they ask is read here. */
export function networkHost(p: HostParts): NetworkHost {
  const { env } = p;
  const who = () => p.identity();
  /** The account's shard (cached in the isolate after the first read). */
  const shard = () => accountShard(env, who().accountId);
  return {
    config: () => config(env),
    identity: () => {
      const { accountId, sessionId, phoneNumber } = who();
      return { accountId, sessionId, phoneNumber };
    },
    received: (m) => p.received(m),
    statusChanged: async (selector, target, at, error, opts = {}) => {
      // The buffer holds the session's recent messages (their rows may not be in D1 yet); older ones are updated in D1.
      const here = p.advanceBuffered(selector, target, at, error, opts.deliveredAt);
      if (here.unknown.length === 0) return here.changed;
      const rest: Selector = "ids" in selector ? { ids: here.unknown } : { externalIds: here.unknown };
      return [...here.changed, ...(await advanceStatus(env, await shard(), who().accountId, who().sessionId, rest, target, at, error, { afterSent: opts.afterSent, deliveredAt: opts.deliveredAt, enqueue: (ids) => p.queueEvents(ids), order: p.order }))];
    },
    edited: async (externalId, change, at) => editInbound(env, await shard(), who().sessionId, externalId, change, at, (ids) => p.queueEvents(ids)),
    revoked: async (externalId, at) => {
      const done = await revokeInbound(env, await shard(), who().sessionId, externalId, at, (ids) => p.queueEvents(ids));
      // A deleted message keeps no file: stored bytes go too (a fetch still under way finds no pending row and drops its own).
      const stored = done?.media ? (JSON.parse(done.media) as StoredMedia).mediaId : null;
      if (stored) await env.FILES.delete(`media/${stored}`);
      return done?.row ?? null;
    },
    statusDetail: async (externalId, detail) => (await p.commit(), addNetworkDetail(await shard(), who().sessionId, externalId, detail)),
    accountHealth: (health) => writeSessionHealth(env, who().accountId, who().sessionId, health),
    marketingPreference: (from, optedOut) => setOptedOutByPhone(env, who().accountId, from, optedOut),
    phonesOfUsers: async (userIds) => phonesByUserIds(await shard(), who().accountId, userIds),
    // The chat's recent rows must be in D1 before they move with it.
    identityChanged: async (notice) => void (await p.commit(), await recordIdentityChange(env, await shard(), who().accountId, who().sessionId, notice, (ids) => p.queueEvents(ids), p.recipientMoved)),
    numberKnown: async (userId, digits) => void (await p.commit(), await recordNumberKnown(env, await shard(), who().accountId, who().sessionId, userId, digits, (ids) => p.queueEvents(ids), p.recipientMoved)),
    echoed: async (echo) =>
      recordEcho(await shard(), who().accountId, who().sessionId, echo, (ids) => p.queueEvents(ids), async (id) => {
        await enqueueMediaFetch(env, who().sessionId, [id], BACKSTOP_DELAY_S);
        p.fetchMediaNow(id);
      }),
    called: async (call) => {
      // Meta may deliver a calls webhook again: each call's connect and terminate are announced once.
      const key = `call:${call.event}:${call.id}`;
      if (!p.seen.claim(key)) return;
      try {
        await recordCall(env, await shard(), who().accountId, who().sessionId, call, (ids) => p.queueEvents(ids));
      } catch (err) {
        p.seen.release(key);
        throw err;
      }
    },
    message: async (key) => {
      await p.commit();
      const row = "id" in key ? await messageById(await shard(), key.id) : await messageByExternalId(await shard(), who().sessionId, key.externalId);
      return row?.sessionId === who().sessionId ? row : undefined;
    },
    sentUnreadBefore: async (cutoff, limit, afterId) => (await p.commit(), unreadSentBefore(await shard(), who().sessionId, cutoff, limit, afterId)),
    unreadInbound: async (chatId, upTo, afterId, limit) => unreadInboundOfChat(await shard(), who().accountId, who().sessionId, chatId, upTo, afterId, limit),
    lastInboundAt: async (recipients, since) => lastInboundSince(await shard(), who().sessionId, recipients, since),
    peerSessions: (numbers) => workingSessionsByNumber(env, who().accountId, who().network, numbers),
    // Our rows reach D1 before the peer holds its copy: its read of the chat looks ours up there.
    deliverToPeer: async (peerSessionId, inbound) => (await p.commit(), (await p.peer(peerSessionId).receive(inbound)).ok),
    outboundBySession: async (ids) => {
      const out: { id: string; sessionId: string; chatId: string }[] = [];
      for (const part of chunk(ids, ID_CHUNK)) {
        for (const row of await messagesByIdsQuery(await shard(), who().accountId, part)) if (row.direction === "outbound") out.push({ id: row.id, sessionId: row.sessionId, chatId: row.chatId });
      }
      return out;
    },
    // The peer's own DO records it: its recent rows live in its write buffer.
    peerStatusChanged: (peerSessionId, ids, target, at) => p.peer(peerSessionId).peerReceipt(ids, target, at),
    templateUpdated: (update) => p.templateUpdated(update),
    pendingTemplates: async (limit) => pendingTemplates(await shard(), who().accountId, who().sessionId, limit),
    wakeAt: (at) => p.wakeAt(at),
  };
}
