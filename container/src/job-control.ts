// Async jobs the API can reach while they run: a compile sent with `X-Job-Id` is registered
// here under its namespace (the account's hash), so `DELETE /jobs/<id>` can stop it and
// `GET /jobs/<id>/events` can follow it. Every lookup needs the id and the namespace the job
// came with: another namespace's job is "not found", never stopped or shown.
import type { IncomingMessage, ServerResponse } from "node:http";
import { JobEvents } from "./job-events.ts";

/** Job ids as the API makes them (`job_…`); anything else is refused before it is a map key. */
export const JOB_ID = /^[A-Za-z0-9_-]{1,64}$/;
const NAMESPACE = /^[A-Za-z0-9_-]{0,64}$/;
/** A finished job's events (and final event) stay readable this long, for a reader that reconnects. */
const FINISHED_TTL_MS = 60_000;
const MAX_FINISHED = 64;
/**
 * A cancel that finds no such job leaves a tombstone: the API may cancel a job whose compile
 * request is still on its way here, which is then refused on arrival instead of compiled.
 */
const TOMBSTONE_TTL_MS = 10 * 60_000;
const MAX_TOMBSTONES = 4096;
/** How long DELETE waits for the stopped job to have released its engine and compile slot. */
const STOP_WAIT_MS = 5_000;

export class JobHandle {
  readonly events = new JobEvents();
  private readonly ac = new AbortController();
  private resolveDone!: () => void;
  /** Resolves once the job has ended and given back its slot. */
  readonly done = new Promise<void>((r) => (this.resolveDone = r));
  cancelled = false;
  readonly id: string;
  readonly namespace: string;
  constructor(id: string, namespace: string) {
    this.id = id;
    this.namespace = namespace;
  }

  get signal(): AbortSignal {
    return this.ac.signal;
  }

  cancel(): void {
    this.cancelled = true;
    this.ac.abort();
  }

  /** @internal the registry's */
  settle(): void {
    this.resolveDone();
  }
}

const keyOf = (id: string, ns: string) => `${ns}\n${id}`;

export type StartResult = JobHandle | "invalid" | "cancelled" | "duplicate";

export class JobRegistry {
  private readonly running = new Map<string, JobHandle>();
  private readonly finished = new Map<string, { handle: JobHandle; until: number }>();
  private readonly tombstones = new Map<string, number>();

  /** Registers a compile that came with `X-Job-Id`. */
  start(id: string, namespace = "", now = Date.now()): StartResult {
    if (!JOB_ID.test(id) || !NAMESPACE.test(namespace)) return "invalid";
    const key = keyOf(id, namespace);
    this.prune(now);
    if (this.tombstones.has(key)) return "cancelled";
    if (this.running.has(key)) return "duplicate";
    const h = new JobHandle(id, namespace);
    this.finished.delete(key);
    this.running.set(key, h);
    h.events.emit("status", { state: "queued" });
    return h;
  }

  /** The job has ended (its slot given back): its final event, and it leaves the running set. */
  finish(h: JobHandle, type: string, data: Record<string, unknown>, now = Date.now()): void {
    const key = keyOf(h.id, h.namespace);
    if (this.running.get(key) !== h) return;
    this.running.delete(key);
    h.events.end(type, data);
    this.finished.set(key, { handle: h, until: now + FINISHED_TTL_MS });
    while (this.finished.size > MAX_FINISHED) this.finished.delete(this.finished.keys().next().value!);
    h.settle();
  }

  find(id: string, namespace: string, now = Date.now()): JobHandle | undefined {
    this.prune(now);
    const key = keyOf(id, namespace);
    return this.running.get(key) ?? this.finished.get(key)?.handle;
  }

  /** Stops a running job; an unknown one gets a tombstone (see TOMBSTONE_TTL_MS). */
  cancel(id: string, namespace: string, now = Date.now()): { state: "cancelled"; handle: JobHandle } | { state: "finished" | "unknown" } {
    this.prune(now);
    const key = keyOf(id, namespace);
    const h = this.running.get(key);
    if (h) {
      h.cancel();
      return { state: "cancelled", handle: h };
    }
    if (this.finished.has(key)) return { state: "finished" };
    this.tombstones.delete(key);
    this.tombstones.set(key, now + TOMBSTONE_TTL_MS);
    while (this.tombstones.size > MAX_TOMBSTONES) this.tombstones.delete(this.tombstones.keys().next().value!);
    return { state: "unknown" };
  }

  stats(): { running: number; finished: number; tombstones: number } {
    return { running: this.running.size, finished: this.finished.size, tombstones: this.tombstones.size };
  }

  /** Drops expired entries; both maps are in insertion order, so from the front. */
  private prune(now: number): void {
    for (const [k, v] of this.finished) {
      if (v.until > now) break;
      this.finished.delete(k);
    }
    for (const [k, until] of this.tombstones) {
      if (until > now) break;
      this.tombstones.delete(k);
    }
  }
}

function answer(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const data = Buffer.from(JSON.stringify(body));
  res.writeHead(status, { "Content-Type": "application/json", "Content-Length": String(data.length), ...headers });
  res.end(data);
}

const error = (res: ServerResponse, status: number, code: string, message: string, headers: Record<string, string> = {}) => answer(res, status, { error: { code, message } }, headers);

/** The number in a Last-Event-ID header (0 when absent or not a number). */
function lastEventId(req: IncomingMessage, url: URL): number {
  const raw = String(req.headers["last-event-id"] ?? url.searchParams.get("lastEventId") ?? "");
  return /^\d{1,9}$/.test(raw) ? Number(raw) : 0;
}

/**
 * `DELETE /jobs/<id>?namespace=` (stop it: 200 once its engine is killed and its slot free, 409
 * `job_finished`, 404 unknown) and `GET /jobs/<id>/events?namespace=` (SSE, see JobEvents.serve).
 */
export async function jobRoute(req: IncomingMessage, res: ServerResponse, jobs: JobRegistry, url: URL): Promise<void> {
  req.resume();
  const m = /^\/jobs\/([^/]+)(\/events)?$/.exec(url.pathname);
  const namespace = url.searchParams.get("namespace") ?? "";
  if (!m || !JOB_ID.test(m[1]!) || !NAMESPACE.test(namespace)) return error(res, 404, "not_found", "No such job.");
  const id = m[1]!;
  if (m[2]) {
    if (req.method !== "GET") return error(res, 405, "method_not_allowed", "Use GET.", { Allow: "GET" });
    const h = jobs.find(id, namespace);
    if (!h) return error(res, 404, "not_found", "No such job on this server.");
    if (h.events.serve(res, lastEventId(req, url)) === "too_many") return error(res, 429, "too_many_readers", "This job has as many event readers as it may.", { "Retry-After": "5" });
    return;
  }
  if (req.method !== "DELETE") return error(res, 405, "method_not_allowed", "Use DELETE.", { Allow: "DELETE" });
  const started = Date.now();
  const r = jobs.cancel(id, namespace);
  if (r.state === "finished") return error(res, 409, "job_finished", "The job has already finished.");
  if (r.state !== "cancelled") return error(res, 404, "not_found", "No such job on this server; should it arrive, it is refused.");
  let timer: NodeJS.Timeout | undefined;
  const stopped = await Promise.race([r.handle.done.then(() => true), new Promise<boolean>((ok) => (timer = setTimeout(() => ok(false), STOP_WAIT_MS)))]);
  clearTimeout(timer);
  answer(res, 200, { status: "cancelled", stopped, stoppedInMs: Date.now() - started });
}
