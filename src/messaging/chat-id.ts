/**
 * Addresses of people (docs/contracts.md §3): `<digits>@c.us`, `<digits>@s.whatsapp.net` (the same chat),
 * or a phone number in E.164 (`+14155550123`, the "+" optional). Responses always use `@c.us`.
 */
export const ACCEPTED_ADDRESS_FORMS = "a phone number in E.164 form (`+14155550123`), `<digits>@c.us` or `<digits>@s.whatsapp.net`";

/** Chat ids in paths: a number's, or a person's known only by BSUID. */
export const ACCEPTED_CHAT_FORMS = `${ACCEPTED_ADDRESS_FORMS}, or \`<BSUID>@bsuid\``;

const DIGITS = /^[1-9][0-9]{6,14}$/;

/** A WhatsApp business-scoped user id (BSUID): country code, optional `ENT.` (a parent id), an alphanumeric id. */
export const BSUID = /^[A-Z]{2}\.(?:ENT\.)?[A-Za-z0-9]{1,128}$/;

/** Digits of a person's address, or null when it is none of the accepted forms. */
export function parseAddress(raw: string): string | null {
  const value = raw.trim();
  let digits: string;
  const at = value.indexOf("@");
  if (at >= 0) {
    const domain = value.slice(at + 1).toLowerCase();
    if (domain !== "c.us" && domain !== "s.whatsapp.net") return null;
    digits = value.slice(0, at);
  } else {
    digits = value.startsWith("+") ? value.slice(1) : value;
  }
  return DIGITS.test(digits) ? digits : null;
}

/**
 * The chat of a person the network names only by BSUID (no number known): `<BSUID>@bsuid`. A BSUID
 * starts with two capital letters and a dot, so it never reads as a number's chat; it is the
 * account's own (chats and contacts are always looked up within the account).
 */
export const USER_CHAT_DOMAIN = "bsuid";

/**
 * A person's address on the network: the digits of their number or, with no number known, their
 * BSUID. `chatIdOf`, the sends and the contacts' key (`contactKeyOf`) take either.
 */
export const isUserAddress = (address: string): boolean => BSUID.test(address);

export function chatIdOf(address: string): string {
  return isUserAddress(address) ? `${address}@${USER_CHAT_DOMAIN}` : `${address}@c.us`;
}

/** An address of a chat id or send: a number's (`parseAddress`) or `<BSUID>@bsuid`; null otherwise. */
export function parseChatAddress(raw: string): string | null {
  const value = raw.trim();
  const at = value.lastIndexOf("@");
  if (at > 0 && value.slice(at + 1) === USER_CHAT_DOMAIN) {
    const user = value.slice(0, at);
    return isUserAddress(user) ? user : null;
  }
  return parseAddress(value);
}

/**
 * What `contacts.phone` holds for an address: E.164 for a number, the BSUID itself for a person
 * known only by it (it cannot start with "+", so the two never collide, and the account's unique
 * index then keeps one contact per BSUID too).
 */
export function contactKeyOf(address: string): string {
  return isUserAddress(address) ? address : e164Of(address);
}

/** The address behind a `contacts.phone` value (see `contactKeyOf`). */
export function addressOfContactKey(key: string): string {
  return key.startsWith("+") ? key.slice(1) : key;
}

/** The phone number (E.164) a `contacts.phone` value names, or null for a contact known only by BSUID. */
export function phoneOfContactKey(key: string): string | null {
  return key.startsWith("+") ? key : null;
}

export function e164Of(digits: string): string {
  return `+${digits}`;
}

/** The address (digits, or a BSUID) of a chat id. */
export function digitsOfChatId(chatId: string): string {
  return chatId.slice(0, chatId.lastIndexOf("@"));
}
