import { config, DEFAULT_RETRY_SCHEDULE } from "../platform/config.ts";

/** The webhook pipeline's constants; its tunables are parsed in platform/config.ts. */
export { DEFAULT_RETRY_SCHEDULE };
/** Cloudflare Queues accept delays up to 12 hours; longer waits are kept in D1 for the cron. */
export const MAX_QUEUE_DELAY_SECONDS = 12 * 60 * 60;
/** A receiver's Retry-After is honoured up to this. */
export const MAX_RETRY_AFTER_SECONDS = 24 * 60 * 60;
export { MAX_EVENT_BYTES } from "./event-record.ts";
/** Bytes of a receiver's answer kept in the attempt log. */
export const RESPONSE_SNIPPET_BYTES = 1024;
export const MAX_WEBHOOKS_PER_ACCOUNT = 50;

/** Seconds to wait after failed attempt 1, 2, ...; its length + 1 is the number of attempts. */
export const retrySchedule = (env: Env): number[] => config(env).webhooks.retrySchedule;
export const timeoutMs = (env: Env) => config(env).webhooks.timeoutMs;
export const secretGraceMs = (env: Env) => config(env).webhooks.secretGraceMs;
export const disableAfterMs = (env: Env) => config(env).webhooks.disableAfterMs;
export const allowLoopback = (env: Env) => config(env).allowLoopbackUrls;

/**
 * `Retry-After` as seconds or an HTTP date (RFC 9110 10.2.3); null when absent or unparsable.
 */
export function parseRetryAfter(value: string | null, now: number): number | null {
  if (!value) return null;
  const v = value.trim();
  if (/^\d+$/.test(v)) return Math.min(Number(v), MAX_RETRY_AFTER_SECONDS);
  const at = Date.parse(v);
  if (Number.isNaN(at)) return null;
  return Math.min(Math.max(0, Math.ceil((at - now) / 1000)), MAX_RETRY_AFTER_SECONDS);
}

/** A stream ticket opens one socket within this long of its creation. */
export const STREAM_TICKET_TTL_MS = 60_000;
/** Open event-stream sockets per account (each costs the account's Durable Object a send per event). */
export const MAX_STREAMS_PER_ACCOUNT = 100;
/** Events replayed on one connection with `?after=`; a longer backlog closes with 4001 and resumes from the last one sent. */
export const STREAM_REPLAY_MAX = 500;
