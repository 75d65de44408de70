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
export const leaseMs = (env: Env) => config(env).webhooks.leaseMs;
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
/** GET /api/events/poll: events per page (default, most), bytes of event bodies per page (at least one event always goes). */
export const POLL_LIMIT_DEFAULT = 100;
export const POLL_LIMIT_MAX = 500;
export const POLL_MAX_BYTES = 4 * 1024 * 1024;
/** The longest `wait` a poll may hold its request for (under common proxies' idle timeouts). */
export const POLL_WAIT_MAX_SECONDS = 25;
/** How often a waiting poll looks again. */
export const POLL_INTERVAL_MS = 1_000;
/**
 * A poll returns only events whose id is this old: an id is minted a little before its row commits,
 * so a cursor past a fresher id could skip an event that commits just after the read.
 */
export const POLL_SETTLE_MS = 3_000;
