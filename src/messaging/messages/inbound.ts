import { getDb } from "../../db/client.ts";
import { enqueueEvents, prepareEventAfterChange } from "../../events/emit.ts";
import { newId } from "../../platform/ids.ts";
import { ensureContactStatements } from "../contacts/service.ts";
import type { InboundFromNetwork } from "../networks/driver.ts";
import { toMessage, type MessageRow } from "./mapper.ts";
import { inboundRow, insertInboundStatement } from "./store.ts";

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
export async function recordInbound(env: Env, accountId: string, sessionId: string, m: InboundFromNetwork, opts: { enqueue?: (eventIds: string[]) => void } = {}): Promise<MessageRow | null> {
  const db = getDb(env.DB);
  const row = inboundRow(newId("msg"), accountId, sessionId, m);
  const contact = ensureContactStatements(env, accountId, m.from, m.profileName, isStop(m.text), sessionId);
  const received = prepareEventAfterChange(env, { type: "message.received", accountId, sessionId, data: toMessage(row) });
  const [contactInserted, , ...rest] = await db.batch([...contact.statements, insertInboundStatement(env, row), received.statement]);
  const inserted = rest[rest.length - 2] as { id: string }[];
  const ids = [contact.created(contactInserted), inserted.length > 0 ? received.event.id : null].filter((id): id is string => id !== null);
  if (ids.length > 0) {
    if (opts.enqueue) opts.enqueue(ids);
    else await enqueueEvents(env, ids);
  }
  return inserted.length > 0 ? row : null;
}
