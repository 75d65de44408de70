import { fromBase64, hmacSha256, randomBytes, toBase64 } from "../platform/crypto.ts";

/** A new Standard Webhooks secret: `whsec_` + base64 of 32 random bytes. Shown to the user once. */
export function newWebhookSecret(): string {
  return `whsec_${toBase64(randomBytes(32))}`;
}

function secretBytes(secret: string): Uint8Array {
  return fromBase64(secret.startsWith("whsec_") ? secret.slice("whsec_".length) : secret);
}

/** `v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">` (docs/contracts.md §4). */
export async function signPayload(secret: string, id: string, timestampSeconds: number, body: string): Promise<string> {
  const mac = await hmacSha256(secretBytes(secret), `${id}.${timestampSeconds}.${body}`);
  return `v1,${toBase64(mac)}`;
}

/**
 * Headers of one signed delivery. Several secrets (during a rotation's grace period) give several
 * space-separated signatures, as the specification allows.
 */
export async function signedHeaders(secrets: string[], id: string, body: string, now = Date.now()): Promise<Record<string, string>> {
  const timestamp = Math.floor(now / 1000);
  const signatures = await Promise.all(secrets.map((s) => signPayload(s, id, timestamp, body)));
  return {
    "content-type": "application/json",
    "webhook-id": id,
    "webhook-timestamp": String(timestamp),
    "webhook-signature": signatures.join(" "),
  };
}
