import { randomBytes } from "./crypto.ts";

const ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyz";

/**
 * Prefixed, time-ordered ids (`acc_…`, `msg_…`): 9 base-36 chars of milliseconds, then 12 random
 * chars, so ids sort by creation time and keyset pagination can order by id.
 */
export function newId(prefix: string, now = Date.now()): string {
  const time = now.toString(36).padStart(9, "0");
  const bytes = randomBytes(12);
  let rand = "";
  for (const b of bytes) rand += ALPHABET[b % 36];
  return `${prefix}_${time}${rand}`;
}
