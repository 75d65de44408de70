import { getDb } from "../../db/client.ts";
import { messages } from "../../db/schema/index.ts";
import { prepareEvents, type EmitInput } from "../../events/emit.ts";
import { newId } from "../../platform/ids.ts";
import { chatIdOf } from "../chat-id.ts";
import { ensureContactStatements } from "../contacts/service.ts";
import type { InboundFromNetwork } from "../networks/whatsapp.ts";
import { toMessage, type MessageRow } from "./mapper.ts";

/** A whole-message `STOP` (any case, surrounding spaces ignored) opts the sender out. */
export function isStop(text: string | undefined): boolean {
  return text?.trim().toUpperCase() === "STOP";
}

/**
 * Records one inbound message: deduplicated on (session, network id) so a replayed webhook stores
 * nothing new; the sender becomes a contact when unknown (`contact.created`, with the session it
 * came in on); then `message.received`. Two D1 round trips: the message and the contact in one
 * batch, then their events in another. Returns the stored row, or null for a duplicate.
 * `enqueue` takes the recorded events' ids (the Session DO coalesces them); default: enqueue now.
 */
export async function recordInbound(env: Env, accountId: string, sessionId: string, m: InboundFromNetwork, opts: { enqueue?: (eventIds: string[]) => void } = {}): Promise<MessageRow | null> {
  const db = getDb(env.DB);
  const insertMessage = db
    .insert(messages)
    .values({
      id: newId("msg"),
      accountId,
      sessionId,
      chatId: chatIdOf(m.from),
      direction: "inbound",
      type: m.type,
      text: m.text ?? null,
      template: m.template ? JSON.stringify(m.template) : null,
      media: m.media ? JSON.stringify({ url: null, size: null, mediaId: null, origin: null, ...m.media }) : null,
      status: "received",
      externalId: m.externalId,
      replyTo: null,
      createdAt: m.timestamp,
    })
    .onConflictDoNothing()
    .returning();
  const contact = ensureContactStatements(env, accountId, m.from, m.profileName, isStop(m.text));
  const [inserted, contactInserted] = await db.batch([insertMessage, ...contact.statements]);
  const row = inserted[0] ?? null;
  const created = contact.created(contactInserted);
  const announce: EmitInput[] = [];
  if (created) announce.push({ type: "contact.created", accountId, sessionId, data: created });
  if (row) announce.push({ type: "message.received", accountId, sessionId, data: toMessage(row) });
  if (announce.length > 0) {
    const prepared = prepareEvents(env, announce);
    await db.batch(prepared.statements as [(typeof prepared.statements)[number], ...(typeof prepared.statements)[number][]]);
    if (opts.enqueue) opts.enqueue(prepared.events.map((e) => e.id));
    else await prepared.enqueue();
  }
  return row;
}
