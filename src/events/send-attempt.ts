import { parseRetryAfter, RESPONSE_SNIPPET_BYTES } from "./config.ts";
import { signedHeaders } from "./signing.ts";

export interface SignedPost {
  url: string;
  /** Current secret first; a rotated-out one still in its grace period after it. */
  secrets: string[];
  /** `webhook-id`: the event id, the same on every retry so receivers can deduplicate. */
  messageId: string;
  body: string;
  timeoutMs: number;
  /** Signature headers made beforehand (`signedHeaders`): a throttled attempt signs before its turn, so its start is only the fetch. */
  signed?: Record<string, string>;
}

export interface SignedPostResult {
  statusCode: number | null;
  durationMs: number;
  error: string | null;
  responseBody: string | null;
  retryAfter: number | null;
}

const USER_AGENT = "texmsg-webhooks/1 (+https://www.standardwebhooks.com)";

/**
 * Turns of the event loop a due timeout gives an answer that may already be here before it aborts.
 * A busy isolate (a loaded machine) runs its timers late, together with the I/O that came meanwhile:
 * the answer is then read first and counted, not thrown away as a timeout and sent again.
 */
const GRACE_TURNS = 3;

/**
 * One signed POST. Redirects are not followed (a 3xx is a failure: following could lead a
 * delivery to a host that was never checked). Never throws: every outcome is a result. An answer's
 * status, once received, is the outcome: the timeout cuts only the reading of its body then.
 */
export async function sendAttempt(input: SignedPost): Promise<SignedPostResult> {
  const started = Date.now();
  const headers = { ...(input.signed ?? (await signedHeaders(input.secrets, input.messageId, input.body, started))), "user-agent": USER_AGENT };
  const deadline = abortAfter(input.timeoutMs);
  let res: Response;
  try {
    res = await fetch(input.url, { method: "POST", headers, body: input.body, redirect: "manual", signal: deadline.signal });
  } catch (err) {
    deadline.clear();
    const durationMs = Date.now() - started;
    const timedOut = deadline.signal.aborted || (err instanceof Error && (err.name === "TimeoutError" || err.name === "AbortError"));
    const error = timedOut ? `timed out after ${input.timeoutMs} ms` : `network error: ${err instanceof Error ? err.message : String(err)}`.slice(0, 500);
    return { statusCode: null, durationMs, error, responseBody: null, retryAfter: null };
  }
  const responseBody = await readSnippet(res).catch(() => null);
  deadline.clear();
  const durationMs = Date.now() - started;
  const ok = res.status >= 200 && res.status < 300;
  let error: string | null = null;
  if (res.status >= 300 && res.status < 400) error = `redirect not followed (${res.status} to ${res.headers.get("location") ?? "nowhere"})`;
  else if (!ok) error = `receiver answered ${res.status}`;
  return { statusCode: res.status, durationMs, error, responseBody, retryAfter: ok ? null : parseRetryAfter(res.headers.get("retry-after"), Date.now()) };
}

/** A signal aborted `ms` from now, after GRACE_TURNS turns for an answer already received; `clear` once it is read. */
function abortAfter(ms: number): { signal: AbortSignal; clear: () => void } {
  const controller = new AbortController();
  let cleared = false;
  const timer = setTimeout(async () => {
    for (let turn = 0; turn < GRACE_TURNS && !cleared; turn++) await new Promise((r) => setTimeout(r, 0));
    if (!cleared) controller.abort(new DOMException(`timed out after ${ms} ms`, "TimeoutError"));
  }, ms);
  return {
    signal: controller.signal,
    clear: () => {
      cleared = true;
      clearTimeout(timer);
    },
  };
}

/** The first bytes of the answer (as text), then the rest is discarded. */
async function readSnippet(res: Response): Promise<string | null> {
  if (!res.body) return null;
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    while (size < RESPONSE_SNIPPET_BYTES) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.byteLength;
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
  const all = new Uint8Array(size);
  let offset = 0;
  for (const c of chunks) {
    all.set(c, offset);
    offset += c.byteLength;
  }
  return new TextDecoder().decode(all.subarray(0, RESPONSE_SNIPPET_BYTES)) || null;
}
