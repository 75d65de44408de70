import { fromBase64, hmacSha256, timingSafeEqual, toBase64, toBase64Url } from "../../platform/crypto.ts";
import { newId } from "../../platform/ids.ts";
import { inertFileHeaders, isServedType, servedType, SNIFF_BYTES } from "../../platform/inert-content.ts";

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

/**
 * Marks an object whose served type was decided here from its bytes (`putFile`); files stored
 * before that carry their sender's type and are checked again when served.
 */
const CHECKED = "bytes-v1";

/**
 * Stores a file under `media/<id>` with the type it is to be served as, decided now from its first
 * bytes (see platform/inert-content.ts): a sender's declared type never reaches a browser unchecked.
 */
export async function putFile(env: Env, accountId: string, bytes: Uint8Array, declared: string | null, filename: string | null | undefined, mediaId = newId("med")): Promise<string> {
  const headers = inertFileHeaders(servedType(declared, bytes.subarray(0, SNIFF_BYTES)), filename, mediaId);
  await env.FILES.put(`media/${mediaId}`, bytes, {
    httpMetadata: { contentType: headers["Content-Type"], contentDisposition: headers["Content-Disposition"] },
    customMetadata: { accountId, checked: CHECKED },
  });
  return mediaId;
}

/** Stores uploaded media under `media/`; answers its id. */
export async function putMedia(env: Env, accountId: string, b64: string, mimetype: string, filename?: string): Promise<{ mediaId: string; size: number }> {
  const bytes = fromBase64(b64);
  return { mediaId: await putFile(env, accountId, bytes, mimetype, filename), size: bytes.byteLength };
}

/** The filename an older object's `Content-Disposition` named (written as `...; filename="<name>"`). */
function legacyFilename(disposition: string | undefined): string | null {
  const at = disposition?.indexOf('filename="') ?? -1;
  if (!disposition || at < 0) return null;
  const start = at + 'filename="'.length;
  const end = disposition.indexOf('"', start);
  return disposition.slice(start, end < 0 ? undefined : end);
}

/**
 * The headers a stored file is served with. Checked at store time: as stored (still only a type
 * `servedType` could have chosen). Stored before: decided now from its first bytes.
 */
export async function servedHeaders(env: Env, mediaId: string, obj: R2Object): Promise<Record<string, string>> {
  const stored = obj.httpMetadata ?? {};
  if (obj.customMetadata?.checked === CHECKED && isServedType(stored.contentType) && stored.contentDisposition) {
    return inertFileHeaders({ contentType: stored.contentType!, inline: stored.contentDisposition.startsWith("inline") }, legacyFilename(stored.contentDisposition), mediaId);
  }
  const head = await env.FILES.get(`media/${mediaId}`, { range: { offset: 0, length: SNIFF_BYTES } });
  const bytes = head ? new Uint8Array(await head.arrayBuffer()) : new Uint8Array(0);
  return inertFileHeaders(servedType(stored.contentType ?? null, bytes), legacyFilename(stored.contentDisposition), mediaId);
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
