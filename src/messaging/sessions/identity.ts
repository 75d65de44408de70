import { prepareEvents } from "../../events/emit.ts";
import type { Shard } from "../../platform/shards.ts";
import { addressOfContactKey, chatIdOf, contactKeyOf, e164Of, isUserAddress, phoneOfContactKey } from "../chat-id.ts";
import { toContact } from "../contacts/mapper.ts";
import type { ContactIdentity, IdentityChange } from "../contacts/schemas.ts";
import { changeIdentityStatements, contactByPhoneOrUser, contactsByPhonesQuery, deleteContactStatement } from "../contacts/service.ts";
import type { IdentityNotice } from "../networks/driver.ts";
import { moveChatStatements } from "../store/chats.ts";

type Enqueue = (ids: string[]) => void;
/** The session's own records keyed by a person's address (its send limits' counters) follow a move. */
type Moved = (fromAddress: string, toAddress: string) => void;

/**
 * A person's number or BSUID changed (a WhatsApp `system` message). The contact takes the new ids
 * (and the new number, unless another contact of the account has it); with a new number the chat of
 * this session moves to it, history included, so a reply goes to the number that reads it. A person
 * known only by BSUID who gets a new one moves to the new BSUID's chat the same way. One batch with
 * `contact.identity_changed`. Nothing to change (no such contact or chat, e.g. a replay after the
 * move): no event.
 */
export async function recordIdentityChange(env: Env, shard: Shard, accountId: string, sessionId: string, n: IdentityNotice, enqueue: Enqueue, moved: Moved = () => {}): Promise<IdentityChange | null> {
  const oldKey = n.from ? contactKeyOf(n.from) : null;
  const before = await contactByPhoneOrUser(shard, accountId, oldKey, n.previousUserId ?? n.fromUserId ?? null);
  const previousIdentity = before?.identity ? (JSON.parse(before.identity) as ContactIdentity) : null;
  const fromAddress = n.from || (before ? addressOfContactKey(before.phone) : null);
  // Known only by BSUID, a new BSUID is the new address (no number to keep the chat under).
  const newUser = !n.newPhone && fromAddress && isUserAddress(fromAddress) && n.identity?.userId && n.identity.userId !== fromAddress ? n.identity.userId : null;
  const toAddress = n.newPhone ?? newUser;
  const newKey = toAddress ? contactKeyOf(toAddress) : null;
  const taken = newKey && before ? (await contactsByPhonesQuery(shard, accountId, [newKey]).all()).length > 0 : false;
  const fromChat = fromAddress ? chatIdOf(fromAddress) : null;
  const toChat = toAddress ? chatIdOf(toAddress) : null;
  const moveChat = fromChat !== null && toChat !== null && fromChat !== toChat;
  if (!before && !moveChat) return null;
  const now = Date.now();
  // A new number comes with a new BSUID: ids the notice does not name again are the old number's, not kept.
  const identity: ContactIdentity | null = n.newPhone ? (n.identity ?? null) : { ...previousIdentity, ...n.identity };
  const keyNow = newKey && !taken ? newKey : null;
  const after = before ? { ...before, identity: identity && Object.keys(identity).length ? JSON.stringify(identity) : null, phone: keyNow ?? before.phone, updatedAt: now } : null;
  const change: IdentityChange = {
    kind: n.kind,
    sessionId,
    contact: after ? toContact(after) : null,
    previous: { phone: before ? phoneOfContactKey(before.phone) : n.from && !isUserAddress(n.from) ? e164Of(n.from) : null, chatId: fromChat, identity: previousIdentity },
    chatId: moveChat ? toChat! : fromChat,
    chatMoved: moveChat,
  };
  await writeChange(env, shard, accountId, sessionId, change, [
    ...(before ? changeIdentityStatements(shard, accountId, before.id, identity, keyNow, now) : []),
    ...(moveChat ? moveChatStatements(shard, accountId, sessionId, fromChat!, toChat!) : []),
  ], enqueue);
  if (moveChat) moved(fromAddress!, toAddress!);
  return change;
}

/**
 * The network names, beside a BSUID, the number of a person known so far only by that BSUID: their
 * contact gains the number and their chat of this session moves to the number's, history included,
 * so there is one chat, as after a number change (`contact.identity_changed`, kind
 * `user_number_known`). When another contact of the account has the number already, that one is the
 * person's: it takes the BSUID's ids and the BSUID's contact goes. Null when the BSUID is no such
 * contact's (e.g. a replay after the change).
 */
export async function recordNumberKnown(env: Env, shard: Shard, accountId: string, sessionId: string, userId: string, digits: string, enqueue: Enqueue, moved: Moved = () => {}): Promise<IdentityChange | null> {
  if (!isUserAddress(userId)) return null;
  const phone = e164Of(digits);
  const rows = await contactsByPhonesQuery(shard, accountId, [contactKeyOf(userId), phone]).all();
  const before = rows.find((r) => r.phone === userId);
  if (!before) return null;
  const owner = rows.find((r) => r.phone === phone);
  const now = Date.now();
  const identity = before.identity ? (JSON.parse(before.identity) as ContactIdentity) : null;
  const merged = owner ? { ...(owner.identity ? (JSON.parse(owner.identity) as ContactIdentity) : {}), ...identity } : identity;
  const fromChat = chatIdOf(userId);
  const toChat = chatIdOf(digits);
  const change: IdentityChange = {
    kind: "user_number_known",
    sessionId,
    contact: toContact({ ...(owner ?? before), phone, identity: merged ? JSON.stringify(merged) : null, updatedAt: now }),
    previous: { phone: null, chatId: fromChat, identity },
    chatId: toChat,
    chatMoved: true,
  };
  const contact = owner
    ? [...changeIdentityStatements(shard, accountId, owner.id, merged, null, now), deleteContactStatement(shard, accountId, before.id)]
    : changeIdentityStatements(shard, accountId, before.id, identity, phone, now);
  await writeChange(env, shard, accountId, sessionId, change, [...contact, ...moveChatStatements(shard, accountId, sessionId, fromChat, toChat)], enqueue);
  moved(userId, digits);
  return change;
}

async function writeChange(env: Env, shard: Shard, accountId: string, sessionId: string, change: IdentityChange, statements: unknown[], enqueue: Enqueue): Promise<void> {
  const event = prepareEvents(env, shard, { type: "contact.identity_changed", accountId, sessionId, data: change });
  const { db } = shard;
  await db.batch([...statements, ...event.statements] as unknown as Parameters<typeof db.batch>[0]);
  enqueue(event.events.map((e) => e.id));
}
