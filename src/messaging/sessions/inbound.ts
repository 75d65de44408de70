import { enqueueEvents, prepareEventAfterChange } from "../../events/emit.ts";
import { newId } from "../../platform/ids.ts";
import { chatIdOf } from "../chat-id.ts";
import { ensureContactStatements } from "../contacts/service.ts";
import { BACKSTOP_DELAY_S, enqueueMediaFetch } from "../media/inbound.ts";
import { needsFetch } from "../media/limits.ts";
import type { InboundFromNetwork } from "../networks/driver.ts";
import { toMessage, type MessageRow } from "../messages/mapper.ts";
import { referencedIds } from "../store/reads.ts";
import { inboundRow } from "../store/rows.ts";
import { insertInboundStatement, reactionStatement } from "../store/writes.ts";
import { accountShard } from "../../platform/shards.ts";
import { sequenced } from "../session-sequence.ts";
import type { EmitInput } from "../../events/event-record.ts";

/** A whole-message `STOP` (any case, surrounding spaces ignored) opts the sender out. */
export function isStop(text: string | undefined): boolean {
  return text?.trim().toUpperCase() === "STOP";
}

/**
 * Records one inbound message: deduplicated on (session, network id) so a replayed webhook stores
 * nothing new; the sender becomes a contact when unknown (`contact.created`, with the session it
 * came in on); then `message.received`. One D1 round trip: each row with its event, the event
 * recorded only if the row was. Returns the stored row, or null for a duplicate.
 * `enqueue` takes the recorded events' ids (the Session DO coalesces them); default: enqueue now.
 */
export async function recordInbound(
  env: Env,
  accountId: string,
  sessionId: string,
  m: InboundFromNetwork,
  opts: {
    enqueue?: (eventIds: string[]) => void;
    /** Starts fetching a file now (the Session DO); the queued job is then only the backstop. */
    fetchNow?: (messageId: string) => void;
    /** Called in the session's own object: its event numbers, taken without a call to itself. */
    sequences?: (n: number) => number;
  } = {},
): Promise<MessageRow | null> {
  const shard = await accountShard(env, accountId);
  const { db } = shard;
  const chatId = chatIdOf(m.from);
  const refs = await referencedIds(shard, sessionId, chatId, [m.contextExternalId, m.reactionToExternalId]);
  const row = inboundRow(newId("msg"), accountId, sessionId, m, refs);
  // Two numbers of the session's sequence: the contact's event (if it is created) comes first.
  const [contactOrder, receivedInput] = await sequenced<EmitInput>(env, [
    { type: "contact.created", accountId, sessionId, data: {} },
    { type: "message.received", accountId, sessionId, data: toMessage(row) },
  ], opts.sequences ? { sessionId, take: opts.sequences } : undefined);
  // A system message is the network's notice about the person (e.g. a number change), not them writing: it makes no contact.
  const contact = m.type === "system" ? { statements: [] as const, created: () => null } : ensureContactStatements(shard, accountId, m.from, m.profileName, isStop(m.text), sessionId, m.identity, contactOrder!.order?.sequence);
  const received = prepareEventAfterChange(shard, receivedInput!);
  // A reaction also lands on the message it reacts to (when we have it).
  const target = m.reactionToExternalId ? refs.get(m.reactionToExternalId) : undefined;
  const react = target && m.content?.reaction ? [reactionStatement(shard, target, chatId, m.content.reaction.emoji, row.id)] : [];
  const results = await db.batch([...contact.statements, insertInboundStatement(shard, row), received.statement, ...react]);
  const inserted = results[contact.statements.length] as { id: string }[];
  const ids = [contact.created((results[0] ?? []) as { id: string }[]), inserted.length > 0 ? received.event.id : null].filter((id): id is string => id !== null);
  if (ids.length > 0) {
    if (opts.enqueue) opts.enqueue(ids);
    else await enqueueEvents(env, shard, ids);
  }
  if (inserted.length === 0) return null;
  // Network download URLs expire within minutes: the file is fetched now, and a queued job (a
  // no-op once the file is stored) retries it if this attempt fails or is lost.
  if (m.media && needsFetch(m.media)) {
    await enqueueMediaFetch(env, sessionId, [row.id], opts.fetchNow ? BACKSTOP_DELAY_S : 0);
    opts.fetchNow?.(row.id);
  }
  return row;
}
