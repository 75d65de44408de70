/**
 * Tunables of the webhook pipeline, read from [vars] (wrangler.toml). Declared here until
 * worker-configuration.d.ts is regenerated (`npm run types`); the declarations then merge.
 */
interface WebhookVars {
  /** Days of continuous failure after which an endpoint is disabled (default 5). */
  WEBHOOK_DISABLE_AFTER_DAYS: string;
  /** Hours during which a rotated-out secret still signs deliveries (default 24). */
  WEBHOOK_SECRET_GRACE_HOURS: string;
  /** Per-attempt timeout in milliseconds (default 15000). */
  WEBHOOK_TIMEOUT_MS: string;
}
declare global {
  interface Env extends WebhookVars {}
  namespace Cloudflare {
    interface Env extends WebhookVars {}
  }
}

/** docs/contracts.md §4: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h. */
export const DEFAULT_RETRY_SCHEDULE = [5, 300, 1800, 7200, 18000, 36000, 36000];
/** Cloudflare Queues accept delays up to 12 hours; longer waits are kept in D1 for the cron. */
export const MAX_QUEUE_DELAY_SECONDS = 12 * 60 * 60;
/** A receiver's Retry-After is honoured up to this. */
export const MAX_RETRY_AFTER_SECONDS = 24 * 60 * 60;
/** Serialized `{type, timestamp, data}` larger than this is refused at emit (queue and D1 row limits). */
export const MAX_EVENT_BYTES = 256 * 1024;
/** Bytes of a receiver's answer kept in the attempt log. */
export const RESPONSE_SNIPPET_BYTES = 1024;
export const MAX_WEBHOOKS_PER_ACCOUNT = 50;

function positive(raw: string | undefined, fallback: number): number {
  const n = Number(raw);
  return raw !== undefined && raw.trim() !== "" && Number.isFinite(n) && n > 0 ? n : fallback;
}

/** Seconds to wait after failed attempt 1, 2, ...; its length + 1 is the number of attempts. */
export function retrySchedule(env: Env): number[] {
  const raw = env.WEBHOOK_RETRY_SCHEDULE?.trim();
  if (!raw) return DEFAULT_RETRY_SCHEDULE;
  const parts = raw.split(",").map((s) => Number(s.trim()));
  if (parts.length === 0 || parts.some((n) => !Number.isFinite(n) || n < 0)) return DEFAULT_RETRY_SCHEDULE;
  return parts;
}

export const timeoutMs = (env: Env) => positive(env.WEBHOOK_TIMEOUT_MS, 15_000);
export const secretGraceMs = (env: Env) => positive(env.WEBHOOK_SECRET_GRACE_HOURS, 24) * 3600_000;
export const disableAfterMs = (env: Env) => positive(env.WEBHOOK_DISABLE_AFTER_DAYS, 5) * 86400_000;
export const allowLoopback = (env: Env) => env.WEBHOOK_ALLOW_LOOPBACK === "1";

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
