import { getDb } from "../../db/client.ts";
import { messages } from "../../db/schema/index.ts";
import { emit } from "../../events/emit.ts";
import { newId } from "../../platform/ids.ts";
import { chatIdOf } from "../chat-id.ts";
import { ensureContact } from "../contacts/service.ts";
import type { InboundFromNetwork } from "../networks/whatsapp.ts";
import { toMessage } from "./mapper.ts";

/** A whole-message `STOP` (any case, surrounding spaces ignored) opts the sender out. */
export function isStop(text: string | undefined): boolean {
  return text?.trim().toUpperCase() === "STOP";
}

/**
 * Records one inbound message: deduplicated on (session, network id) so a replayed webhook stores
 * nothing new; the sender becomes a contact when unknown; then `message.received`.
 * Returns false for a duplicate.
 */
export async function recordInbound(env: Env, accountId: string, sessionId: string, m: InboundFromNetwork): Promise<boolean> {
  const db = getDb(env.DB);
  const [row] = await db
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
  if (!row) return false;
  await ensureContact(env, accountId, m.from, m.profileName, isStop(m.text), sessionId);
  await emit(env, { type: "message.received", accountId, sessionId, data: toMessage(row) });
  return true;
}
