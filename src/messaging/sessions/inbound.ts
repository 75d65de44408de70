import { enqueueRecorded, eventRecord, prepareEventsIfInserted } from "../../events/emit.ts";
import type { BatchItem } from "drizzle-orm/batch";
import type { EventRecord } from "../../events/types.ts";
import { newId } from "../../platform/ids.ts";
import { chatIdOf } from "../chat-id.ts";
import { ensureContactsStatements, type Sender } from "../contacts/inbound-contacts.ts";
import { BACKSTOP_DELAY_S, enqueueMediaFetch } from "../media/inbound.ts";
import { needsFetch } from "../media/limits.ts";
import type { InboundFromNetwork } from "../networks/driver.ts";
import { toMessage, type MessageRow } from "../messages/mapper.ts";
import { referencedIds } from "../store/reads.ts";
import { inboundRow } from "../store/rows.ts";
import { insertNewMessagesStatements, MESSAGE_CAUSE } from "../store/group-writes.ts";
import { reactionStatement } from "../store/writes.ts";
import { accountShard } from "../../platform/shards.ts";
import { sequenced } from "../session-sequence.ts";
import type { EmitInput } from "../../events/event-record.ts";

/** A whole-message `STOP` (any case, surrounding spaces ignored) opts the sender out. */
export function isStop(text: string | undefined): boolean {
  return text?.trim().toUpperCase() === "STOP";
}

export interface InboundOptions {
  /** Takes the recorded events (the Session DO coalesces them); default: enqueue now. */
  enqueue?: (events: EventRecord[]) => void;
  /** Starts fetching a file now (the Session DO); the queued job is then only the backstop. */
  fetchNow?: (messageId: string) => void;
  /** Called in the session's own object: its event numbers, taken without a call to itself. */
  sequences?: (n: number) => number;
}

/** One message's outcome: its stored row (null: a replay, stored before), or why it could not be recorded. */
export type InboundResult = { ok: true; row: MessageRow | null } | { ok: false; error: unknown };

/**
 * Records one inbound message (see `recordInboundBatch`). Returns the stored row, or null for a
 * duplicate; throws what kept it from being recorded.
 */
export async function recordInbound(env: Env, accountId: string, sessionId: string, m: InboundFromNetwork, opts: InboundOptions = {}): Promise<MessageRow | null> {
  const [result] = await recordInboundBatch(env, accountId, sessionId, [m], opts);
  if (!result!.ok) throw result!.error;
  return result!.row;
}

/**
 * Records inbound messages of one session, in one D1 round trip whatever their number: each is
 * deduplicated on (session, network id) so a replayed webhook stores nothing new; its sender becomes
 * a contact when unknown (`contact.created`, with the session it came in on); then
 * `message.received`. Each event is recorded only if its row was, and the events of one message are
 * numbered contact first. A message whose event cannot be built (too large) fails alone; a D1
 * failure fails them all (nothing of them is written).
 */
export async function recordInboundBatch(env: Env, accountId: string, sessionId: string, list: InboundFromNetwork[], opts: InboundOptions = {}): Promise<InboundResult[]> {
  const shard = await accountShard(env, accountId);
  const now = Date.now();
  // Two numbers of the session's sequence per message: the contact's event (if it is created) comes first.
  const numbered = await sequenced<EmitInput>(
    env,
    list.flatMap(() => [
      { type: "contact.created", accountId, sessionId, data: {} },
      { type: "message.received", accountId, sessionId, data: {} },
    ]),
    opts.sequences ? { sessionId, take: opts.sequences } : undefined,
  );
  const results: InboundResult[] = [];
  const rows: MessageRow[] = [];
  /** Rows whose message carries a file to fetch. */
  const withFiles = new Set<string>();
  /** This batch's rows by chat and network id, for replies and reactions to each other. */
  const ownRefs = new Map<string, string>();
  const senders: Sender[] = [];
  const received: { record: EventRecord; causeId: string }[] = [];
  const reactions: ReturnType<typeof reactionStatement>[] = [];
  for (const [i, m] of list.entries()) {
    try {
      const chatId = chatIdOf(m.from);
      // Replies and reactions name earlier messages by network id (rare: one read for those only).
      const refs = await referencedIds(shard, sessionId, chatId, [m.contextExternalId, m.reactionToExternalId]);
      // ...or a message of this same batch (not in D1 yet).
      for (const ext of [m.contextExternalId, m.reactionToExternalId]) {
        const earlier = ext ? ownRefs.get(`${chatId} ${ext}`) : undefined;
        if (ext && earlier && !refs.has(ext)) refs.set(ext, earlier);
      }
      const row = inboundRow(newId("msg"), accountId, sessionId, m, refs);
      const record = eventRecord({ type: "message.received", accountId, sessionId, data: toMessage(row) }, now, numbered[2 * i + 1]!.order);
      // A reaction also lands on the message it reacts to (when we have it).
      const target = m.reactionToExternalId ? refs.get(m.reactionToExternalId) : undefined;
      if (target && m.content?.reaction) reactions.push(reactionStatement(shard, target, chatId, m.content.reaction.emoji, row.id));
      // A system message is the network's notice about the person (e.g. a number change), not them writing: it makes no contact.
      if (m.type !== "system") senders.push({ accountId, address: m.from, name: m.profileName, optOut: isStop(m.text), sessionId, identity: m.identity, sequence: numbered[2 * i]!.order?.sequence });
      rows.push(row);
      if (row.externalId) ownRefs.set(`${chatId} ${row.externalId}`, row.id);
      if (m.media && needsFetch(m.media)) withFiles.add(row.id);
      received.push({ record, causeId: row.id });
      results.push({ ok: true, row });
    } catch (error) {
      results.push({ ok: false, error });
    }
  }
  if (rows.length === 0) return results;
  const contacts = ensureContactsStatements(shard, senders, now);
  const inserts = insertNewMessagesStatements(shard, rows);
  const statements: BatchItem<"sqlite">[] = [...contacts.statements, ...inserts, ...prepareEventsIfInserted(shard, received, MESSAGE_CAUSE), ...reactions];
  const out = (await shard.db.batch(statements as [BatchItem<"sqlite">, ...BatchItem<"sqlite">[]])) as unknown[];
  const stored = new Set(out.slice(contacts.statements.length, contacts.statements.length + inserts.length).flatMap((r) => (r as { id: string }[]).map((x) => x.id)));
  // With their content: the fan-out needs no read of them.
  const recorded = [...contacts.created(out), ...received.filter((e) => stored.has(e.causeId)).map((e) => e.record)];
  if (recorded.length > 0) {
    if (opts.enqueue) opts.enqueue(recorded);
    else await enqueueRecorded(env, shard, recorded);
  }
  for (const r of results) if (r.ok && r.row && !stored.has(r.row.id)) r.row = null;
  // Network download URLs expire within minutes: files are fetched now, and a queued job (a no-op
  // once the file is stored) retries one if this attempt fails or is lost.
  const files = [...withFiles].filter((id) => stored.has(id));
  if (files.length > 0) {
    await enqueueMediaFetch(env, sessionId, files, opts.fetchNow ? BACKSTOP_DELAY_S : 0);
    for (const id of files) opts.fetchNow?.(id);
  }
  return results;
}
