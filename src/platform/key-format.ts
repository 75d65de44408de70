import { randomBytes, sha256Hex, toBase64Url } from "./crypto.ts";

// The shape of API keys. No bindings here: the keys CLI (Node) uses this module too.

export const KEY_PREFIX = "tmk_";
/** `tmk_` + 32 base64url chars (192 random bits). */
const KEY_PATTERN = /^tmk_[A-Za-z0-9_-]{32}$/;

export function generateApiKey(): { key: string; prefix: string } {
  const key = KEY_PREFIX + toBase64Url(randomBytes(24));
  return { key, prefix: key.slice(0, 12) };
}

export function looksLikeApiKey(value: string): boolean {
  return KEY_PATTERN.test(value);
}

/** SHA-256 hex. Keys carry 192 random bits, so a fast hash is safe; a slow KDF would only add latency. */
export const hashApiKey = (key: string): Promise<string> => sha256Hex(key);
