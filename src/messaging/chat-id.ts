/**
 * Addresses of people (docs/contracts.md §3): `<digits>@c.us`, `<digits>@s.whatsapp.net` (the same chat),
 * or a phone number in E.164 (`+14155550123`, the "+" optional). Responses always use `@c.us`.
 */
export const ACCEPTED_ADDRESS_FORMS = "a phone number in E.164 form (`+14155550123`), `<digits>@c.us` or `<digits>@s.whatsapp.net`";

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

export function chatIdOf(digits: string): string {
  return `${digits}@c.us`;
}

export function e164Of(digits: string): string {
  return `+${digits}`;
}

export function digitsOfChatId(chatId: string): string {
  return chatId.slice(0, chatId.indexOf("@"));
}
