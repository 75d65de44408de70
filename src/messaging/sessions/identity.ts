import { prepareEvents } from "../../events/emit.ts";
import type { Shard } from "../../platform/shards.ts";
import { chatIdOf, e164Of } from "../chat-id.ts";
import { toContact } from "../contacts/mapper.ts";
import type { ContactIdentity, IdentityChange } from "../contacts/schemas.ts";
import { changeIdentityStatements, contactByPhoneOrUser, contactsByPhonesQuery } from "../contacts/service.ts";
import type { IdentityNotice } from "../networks/driver.ts";
import { moveChatStatements } from "../store/chats.ts";

/**
 * A person's number or BSUID changed (a WhatsApp `system` message). The contact takes the new ids
 * (and the new number, unless another contact of the account has it); with a new number the chat of
 * this session moves to it, history included, so a reply goes to the number that reads it. One
 * batch with `contact.identity_changed`. Nothing to change (no such contact or chat, e.g. a replay
 * after the move): no event.
 */
export async function recordIdentityChange(env: Env, shard: Shard, accountId: string, sessionId: string, n: IdentityNotice, enqueue: (ids: string[]) => void): Promise<IdentityChange | null> {
  const oldPhone = n.from ? e164Of(n.from) : null;
  const before = await contactByPhoneOrUser(shard, accountId, oldPhone, n.previousUserId ?? n.fromUserId ?? null);
  const newPhone = n.newPhone ? e164Of(n.newPhone) : null;
  const taken = newPhone && before ? (await contactsByPhonesQuery(shard, accountId, [newPhone]).all()).length > 0 : false;
  const fromChat = n.from ? chatIdOf(n.from) : before ? chatIdOf(before.phone.slice(1)) : null;
  const toChat = n.newPhone ? chatIdOf(n.newPhone) : null;
  const moveChat = fromChat !== null && toChat !== null && fromChat !== toChat;
  if (!before && !moveChat) return null;
  const now = Date.now();
  const previousIdentity = before?.identity ? (JSON.parse(before.identity) as ContactIdentity) : null;
  // A new number comes with a new BSUID: ids the notice does not name again are the old number's, not kept.
  const identity: ContactIdentity | null = newPhone ? (n.identity ?? null) : { ...previousIdentity, ...n.identity };
  const after = before ? { ...before, identity: identity && Object.keys(identity).length ? JSON.stringify(identity) : null, phone: newPhone && !taken ? newPhone : before.phone, updatedAt: now } : null;
  const change: IdentityChange = {
    kind: n.kind,
    sessionId,
    contact: after ? toContact(after) : null,
    previous: { phone: before?.phone ?? oldPhone, chatId: fromChat, identity: previousIdentity },
    chatId: moveChat ? toChat! : fromChat,
    chatMoved: moveChat,
  };
  const event = prepareEvents(env, shard, { type: "contact.identity_changed", accountId, sessionId, data: change });
  const { db } = shard;
  await db.batch([
    ...(before ? changeIdentityStatements(shard, accountId, before.id, identity, newPhone && !taken ? newPhone : null, now) : []),
    ...(moveChat ? moveChatStatements(shard, accountId, sessionId, fromChat!, toChat!) : []),
    ...event.statements,
  ] as unknown as Parameters<typeof db.batch>[0]);
  enqueue(event.events.map((e) => e.id));
  return change;
}
