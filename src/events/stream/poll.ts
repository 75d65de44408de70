import { POLL_INTERVAL_MS, POLL_LIMIT_DEFAULT, POLL_MAX_BYTES, POLL_SETTLE_MS } from "../config.ts";
import { cursorAt, eventsAfter } from "./after.ts";
import { parseTypes } from "./service.ts";
import { envelopeOf } from "./stream-do.ts";

export interface PollQuery {
  after?: string;
  types?: string;
  sessionId?: string;
  limit?: number;
  wait?: number;
}

/**
 * GET /api/events/poll: the stream's resume-after-cursor over plain HTTP. Answers the account's
 * events after `after` (or, without it, from now), oldest first, each as the stream's frame, and
 * `next`, the cursor to pass next time. With `wait`, an empty answer is held until an event comes
 * or the wait ends, looking again every POLL_INTERVAL_MS: at most wait + 1 index-range reads.
 * The body is built from the stored envelopes without parsing them.
 */
export async function pollEvents(env: Env, accountId: string, q: PollQuery, signal?: AbortSignal): Promise<Response> {
  const filter = { types: parseTypes(q.types), sessionId: q.sessionId ?? null };
  const limit = q.limit ?? POLL_LIMIT_DEFAULT;
  const start = Date.now();
  const after = q.after ?? cursorAt(start);
  const deadline = start + (q.wait ?? 0) * 1000;
  for (;;) {
    const now = Date.now();
    const rows = await eventsAfter(env, accountId, after, filter, limit + 1, cursorAt(now - POLL_SETTLE_MS));
    if (rows.length > 0 || now >= deadline || signal?.aborted) return page(rows, limit, after);
    await new Promise((r) => setTimeout(r, Math.min(POLL_INTERVAL_MS, deadline - now)));
  }
}

function page(rows: { id: string; payload: string }[], limit: number, after: string): Response {
  const frames: string[] = [];
  let bytes = 0;
  for (const r of rows.slice(0, limit)) {
    if (frames.length > 0 && bytes + r.payload.length > POLL_MAX_BYTES) break;
    frames.push(envelopeOf(r.id, r.payload));
    bytes += r.payload.length;
  }
  const next = frames.length > 0 ? rows[frames.length - 1]!.id : after;
  const body = `{"data":[${frames.join(",")}],"next":${JSON.stringify(next)},"hasMore":${rows.length > frames.length}}`;
  return new Response(body, { headers: { "Content-Type": "application/json; charset=UTF-8", "Cache-Control": "no-store" } });
}
