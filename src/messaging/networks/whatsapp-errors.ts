import type { NetworkSendResult } from "./driver.ts";

/** A Graph API error (or a status webhook's error) turned into our failure reason and session effect. */
export function mapGraphError(httpStatus: number, code: number | undefined, message: string | undefined): Omit<Extract<NetworkSendResult, { ok: false }>, "ok"> {
  const detail = message ? `: ${message}` : ".";
  if (code === 190 || code === 102 || code === 104 || httpStatus === 401) {
    return { error: { code: "invalid_token", message: "The WhatsApp access token was rejected; update the session's credentials and restart it." }, sessionFailure: "invalid_token" };
  }
  if (code === 10 || code === 200 || (code === 100 && httpStatus === 403)) {
    return { error: { code: "permission_denied", message: `The access token lacks permission for this phone number${detail}` }, sessionFailure: "permission_denied" };
  }
  // Meta's throughput limit: try again later, backing off (a queued send waits 1, 2, 4... minutes).
  if (code === 130429 || code === 4 || code === 80007) {
    return { error: { code: "rate_limited", message: `The WhatsApp Cloud API is rate limiting this number${detail}` }, retryAfterMs: 60_000 };
  }
  // Too many messages to this one recipient: its pair bucket is empty; wait the pair interval (and back off).
  if (code === 131056) {
    return { error: { code: "pair_rate_limited", message: `Too many messages to this recipient in a short time${detail}` }, retryAfterMs: 6_000, limit: "pair" };
  }
  // Meta held back a marketing template for the recipient's sake: wait at least 24 hours, retry once.
  if (code === 131049) {
    return { error: { code: "ecosystem_limited", message: `Meta did not deliver the message to maintain healthy ecosystem engagement${detail}` }, retryAfterMs: 24 * 60 * 60 * 1000, maxAttempts: 2 };
  }
  if (code === 131047) {
    return { error: { code: "reengagement_window_closed", message: "More than 24 hours have passed since the recipient last replied; only a template message can be sent." } };
  }
  if (code === 131026) return { error: { code: "undeliverable", message: "The message could not be delivered (the recipient may not use WhatsApp or has not accepted the terms)." } };
  if (code === 131051) return { error: { code: "unsupported_message_type", message: `The network does not support this message type${detail}` } };
  if (code === 132000 || code === 132001 || code === 132012) return { error: { code: "template_error", message: `The template was rejected${detail}` } };
  if (httpStatus >= 500 || code === 1 || code === 2 || code === 131000) {
    return { error: { code: "network_unavailable", message: "The WhatsApp Cloud API is unavailable; try again." }, retryAfterMs: 30_000 };
  }
  return { error: { code: "network_rejected", message: `The WhatsApp Cloud API rejected the message${code ? ` (code ${code})` : ""}${detail}` } };
}
