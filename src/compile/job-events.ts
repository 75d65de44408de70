import { directoryDb } from "../platform/shards.ts";
import { log } from "../platform/log.ts";
import { compileNamespace, type JobRef } from "./compiler.ts";
import { compilerFor } from "./config.ts";
import { findJob, getJob, type JobRow } from "./jobs.ts";
import { toJobView } from "./mapper.ts";
import { FINAL_STATUSES } from "./schemas.ts";

/**
 * GET /v1/compile/jobs/{id}/events: the job's progress as Server-Sent Events. While it waits, a
 * `status` event for each status it passes through; while it runs, the compile server's own events
 * of the job (`status`, `pass`, `pass-end`, `tool`, `log`, `log-skipped`, `gap`, then its `result`
 * or `cancelled`), with ids `<attempt>.<n>`; at the end one `done` event with the final job record,
 * and the stream closes. A finished job answers `done` at once. A stream lasts at most
 * MAX_STREAM_MS: a client reconnects (EventSource does by itself) with Last-Event-ID and goes on
 * after the last event it had.
 *
 * Bounded: every write waits for the client to take the previous one, so a slow reader holds the
 * compile server's stream back (which drops what it cannot keep: `gap`) rather than this Worker
 * buffering it; an event of the server over MAX_EVENT_BYTES is not passed on.
 */

/** How long one stream lasts before the client is to reconnect (a Worker request should not live for ever). */
export const MAX_STREAM_MS = 5 * 60_000;
/**
 * How often the job's row is read (and, while it runs, its compiler asked for its events) while it
 * waits; a stream of 5 minutes then makes at most a few hundred requests of the Worker's budget.
 */
const POLL_MS = 2_000;
/** Read sooner, a bounded number of times, when the next state is likely a moment away. */
const QUICK_POLL_MS = 250;
const QUICK_POLLS = 40;
const KEEPALIVE_MS = 15_000;
/** The compile server's events are small (a log line is at most 400 characters): anything much bigger is not one of them. */
const MAX_EVENT_BYTES = 4096;
/** Bytes held of the server's stream waiting for an event's end. */
const MAX_PENDING_BYTES = 2 * MAX_EVENT_BYTES;

const isFinal = (s: string) => (FINAL_STATUSES as readonly string[]).includes(s);

/** `<attempt>.<n>` of a Last-Event-ID: where the client stopped, for the server's stream of that attempt. */
export function parseLastEventId(header: string | undefined): { attempt: number; seq: number } {
  const m = /^(\d{1,6})\.(\d{1,9})$/.exec(header?.trim() ?? "");
  return m ? { attempt: Number(m[1]), seq: Number(m[2]) } : { attempt: 0, seq: 0 };
}

const sse = (event: string, data: unknown, id?: string) => `${id ? `id: ${id}\n` : ""}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;

export async function jobEventStream(env: Env, accountId: string, id: string, lastEventId: string | undefined, now = Date.now()): Promise<Response> {
  const row = await getJob(directoryDb(env), accountId, id); // 404 before any stream starts
  const headers = { "Content-Type": "text/event-stream; charset=utf-8", "Cache-Control": "no-store", "X-Accel-Buffering": "no" };
  if (isFinal(row.status)) return new Response(sse("done", toJobView(row)), { headers });
  const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>();
  const ref: JobRef = { jobId: id, namespace: await compileNamespace(accountId) };
  void follow(env, row, ref, parseLastEventId(lastEventId), writable.getWriter(), now + MAX_STREAM_MS).catch((err) => log.warn("compile job events ended", { jobId: id, error: String(err) }));
  return new Response(readable, { headers });
}

async function follow(env: Env, first: JobRow, ref: JobRef, last: { attempt: number; seq: number }, w: WritableStreamDefaultWriter<Uint8Array>, until: number): Promise<void> {
  const enc = new TextEncoder();
  let wrote = Date.now();
  const write = async (s: string) => {
    await w.ready; // the client took what came before
    await w.write(enc.encode(s));
    wrote = Date.now();
  };
  const db = directoryDb(env);
  let row: JobRow | undefined = first;
  let shown = "";
  let gone = false;
  /** The attempt whose compiler events ended (result or cancelled): not asked again; its record is due. */
  let ended = -1;
  let quickPolls = 0;
  w.closed.catch(() => (gone = true)); // the client went away
  try {
    while (row && !gone && Date.now() < until) {
      const final = isFinal(row.status);
      if (!final && row.status !== shown) {
        shown = row.status;
        await write(sse("status", { status: row.status }));
      }
      // a job that ran between two looks: the compiler keeps its events a minute after it ends
      const missed = final && row.attempt > 0 && row.attempt !== ended && row.startedAt !== null;
      if ((row.status === "running" || missed) && row.attempt !== ended) {
        const from = last.attempt === row.attempt ? last.seq : 0;
        const res = await compilerFor(env).events(ref, from);
        if (res?.body) {
          const attempt = row.attempt;
          const r = await relay(res.body, attempt, from, write, until);
          last = { attempt, seq: r.seq };
          if (r.ended) ended = attempt;
        }
      }
      if (final) {
        await write(sse("done", toJobView(row)));
        return;
      }
      if (Date.now() - wrote > KEEPALIVE_MS) await write(": keepalive\n\n");
      // soon after the job ended there, or while a job just submitted waits: its next state is a moment away
      const quick = ((row.status === "running" && row.attempt === ended) || row.status === "queued") && quickPolls++ < QUICK_POLLS;
      await new Promise((r) => setTimeout(r, quick ? QUICK_POLL_MS : POLL_MS));
      row = await findJob(db, ref.jobId);
    }
    // the stream's time is up: the client reconnects with its Last-Event-ID
  } finally {
    await w.close().catch(() => {});
  }
}

/**
 * Passes the compile server's events on, each id made `<attempt>.<n>`, until its stream ends or
 * the time is up. Returns the last id passed on, and whether the server's last event (`result`,
 * `cancelled`) was among them.
 */
async function relay(body: ReadableStream<Uint8Array>, attempt: number, from: number, write: (s: string) => Promise<void>, until: number): Promise<{ seq: number; ended: boolean }> {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  const stop = setTimeout(() => void reader.cancel().catch(() => {}), Math.max(0, until - Date.now()));
  let pending = "";
  let seq = from;
  let ended = false;
  try {
    for (;;) {
      // the server going (restart, its instance stopped) ends this relay; the caller looks at the job again.
      // A client that went makes write() throw, which ends the whole stream.
      const chunk = await reader.read().catch(() => ({ done: true as const, value: undefined }));
      if (chunk.done) break;
      pending += chunk.value;
      let end: number;
      while ((end = pending.indexOf("\n\n")) >= 0) {
        const block = pending.slice(0, end);
        pending = pending.slice(end + 2);
        if (block.startsWith(":") || block.length > MAX_EVENT_BYTES) continue; // keepalives are ours to send
        const m = /^id: (\d{1,9})\n/.exec(block);
        if (m) seq = Number(m[1]);
        if (/^event: (result|cancelled)$/m.test(block)) ended = true;
        await write(`${m ? `id: ${attempt}.${m[1]}\n${block.slice(m[0].length)}` : block}\n\n`);
      }
      if (pending.length > MAX_PENDING_BYTES) pending = ""; // not an event of the server's
    }
  } finally {
    clearTimeout(stop);
    await reader.cancel().catch(() => {});
  }
  return { seq, ended };
}
