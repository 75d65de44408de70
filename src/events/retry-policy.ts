/** What an attempt's result means for its delivery. Pure, so the schedule is unit tested. */
export interface AttemptResult {
  statusCode: number | null;
  /** Seconds the receiver asked us to wait (Retry-After), if it did. */
  retryAfter: number | null;
}

export type DeliveryOutcome =
  | { status: "succeeded" }
  | { status: "failed"; gone: boolean }
  | { status: "pending"; delaySeconds: number };

/**
 * 2xx succeeds; 410 Gone fails for good (and disables the endpoint); anything else (other status,
 * timeout, network error, redirect) retries after `schedule[attempt - 1]` seconds, or later if the
 * receiver's Retry-After says so, until the schedule is used up. `oneShot` (test sends) never retries.
 */
export function decideOutcome(attempt: number, result: AttemptResult, schedule: number[], oneShot = false): DeliveryOutcome {
  const code = result.statusCode;
  if (code !== null && code >= 200 && code < 300) return { status: "succeeded" };
  if (code === 410) return { status: "failed", gone: true };
  const wait = schedule[attempt - 1];
  if (oneShot || wait === undefined) return { status: "failed", gone: false };
  return { status: "pending", delaySeconds: Math.max(wait, result.retryAfter ?? 0) };
}
