import { fromBase64, hmacSha256, timingSafeEqual, toBase64, toBase64Url } from "../../platform/crypto.ts";
import { newId } from "../../platform/ids.ts";

declare global {
  interface Env {
    /** HMAC key of signed media URLs. When unset a random key is created once and kept in R2. */
    SIGNING_SECRET?: string;
  }
}

/** How long a signed media URL stays valid: long enough for the network to fetch it after a send. */
export const MEDIA_URL_TTL_SECONDS = 60 * 60;
export const MEDIA_ID = /^med_[0-9a-z]{21}$/;
export const EXPIRY = /^\d{1,12}$/;
const SECRET_KEY = "media/_signing-key";

let cachedSecret: string | undefined;

async function signingSecret(env: Env): Promise<string> {
  if (env.SIGNING_SECRET) return env.SIGNING_SECRET;
  if (cachedSecret) return cachedSecret;
  const existing = await env.FILES.get(SECRET_KEY);
  if (existing) return (cachedSecret = await existing.text());
  const fresh = toBase64(crypto.getRandomValues(new Uint8Array(32)));
  // onlyIf: never overwrite a key another isolate wrote first.
  await env.FILES.put(SECRET_KEY, fresh, { onlyIf: { etagDoesNotMatch: "*" } });
  const stored = await env.FILES.get(SECRET_KEY);
  return (cachedSecret = stored ? await stored.text() : fresh);
}

/** Stores uploaded media under `media/`; answers its id. */
export async function putMedia(env: Env, accountId: string, b64: string, mimetype: string, filename?: string): Promise<{ mediaId: string; size: number }> {
  const bytes = fromBase64(b64);
  const mediaId = newId("med");
  await env.FILES.put(`media/${mediaId}`, bytes, {
    httpMetadata: { contentType: mimetype, ...(filename ? { contentDisposition: `attachment; filename="${filename.replace(/["\\\r\n]/g, "_")}"` } : {}) },
    customMetadata: { accountId },
  });
  return { mediaId, size: bytes.byteLength };
}

async function signature(env: Env, mediaId: string, exp: number): Promise<string> {
  // "media:" keeps these signatures apart from anything else signed with the same secret.
  return toBase64Url(await hmacSha256(await signingSecret(env), `media:${mediaId}.${exp}`));
}

export async function signedMediaUrl(env: Env, origin: string, mediaId: string, now = Date.now()): Promise<string> {
  const exp = Math.floor(now / 1000) + MEDIA_URL_TTL_SECONDS;
  return `${origin}/hooks/media/${mediaId}?exp=${exp}&sig=${await signature(env, mediaId, exp)}`;
}

export async function verifyMediaSignature(env: Env, mediaId: string, exp: string | undefined, sig: string | undefined, now = Date.now()): Promise<boolean> {
  if (!MEDIA_ID.test(mediaId) || !exp || !sig || !EXPIRY.test(exp)) return false;
  if (Number(exp) * 1000 < now) return false;
  return timingSafeEqual(await signature(env, mediaId, Number(exp)), sig);
}
