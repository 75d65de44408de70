import { readCapped } from "../../platform/body-guard.ts";
import { config } from "../../platform/config.ts";
import { log } from "../../platform/log.ts";
import { checkTargetUrl } from "../../platform/safe-url.ts";
import { isFileType } from "../message-types.ts";
import type { StoredMedia } from "../messages/mapper.ts";
import type { NetworkDriver, NetworkFile } from "../networks/driver.ts";
import { settlePendingMedia } from "../store/media.ts";
import { messageById } from "../store/reads.ts";
import type { JobOf } from "../queue/send-queue.ts";
import { MEDIA_LIMITS } from "./limits.ts";
import { putFile } from "./store.ts";
import { accountShard } from "../../platform/shards.ts";

/**
 * Inbound files are fetched at once: the network's download URLs expire within minutes. On receipt
 * the session's Durable Object (which holds the network credentials) starts downloading the file
 * into R2, and a `media` job on the sends queue is the durable backstop: it asks the DO again if the
 * file is still pending, retrying transient failures with backoff (MAX_ATTEMPTS in all). The
 * message's media then says `stored`, or `failed` with the reason, announced once as
 * `message.media_stored` / `message.media_failed` (see `settlePendingMedia`).
 */
export const MAX_ATTEMPTS = 5;
const TIMEOUT_MS = 30_000;

export type MediaJob = JobOf<"media", { sessionId: string; messageId: string; attempt: number }>;

/** The outcome of one download attempt. */
export type FetchOutcome = { ok: true } | { ok: false; reason: string; transient: boolean };

/** When the file is also being fetched at once, the queued job waits this long before checking. */
export const BACKSTOP_DELAY_S = 5;

export async function enqueueMediaFetch(env: Env, sessionId: string, messageIds: string[], delaySeconds = 0): Promise<void> {
  if (messageIds.length === 0) return;
  await env.SEND_QUEUE.sendBatch(messageIds.map((messageId) => ({ body: { kind: "media", sessionId, messageId, attempt: 1 } satisfies MediaJob, contentType: "json" as const, ...(delaySeconds ? { delaySeconds } : {}) })));
}

/**
 * The Session DO's immediate fetches: a few at a time, in memory. One lost with the memory (or
 * failing) is done by the queued backstop job.
 */
export class MediaFetcher {
  private readonly waiting: string[] = [];
  private running = 0;

  constructor(
    private readonly attempt: (messageId: string) => Promise<unknown>,
    private readonly concurrency = 12,
  ) {}

  add(messageId: string): void {
    this.waiting.push(messageId);
    this.pump();
  }

  private pump(): void {
    while (this.running < this.concurrency && this.waiting.length > 0) {
      const id = this.waiting.shift()!;
      this.running++;
      void this.attempt(id)
        .catch((err) => log.warn("inbound media fetch failed; the queue retries it", { messageId: id, error: String(err) }))
        .finally(() => {
          this.running--;
          this.pump();
        });
    }
  }
}

/** A plain public URL (sandbox): checked again at fetch time, redirects not followed. */
async function fetchUrl(env: Env, url: string): Promise<NetworkFile> {
  const check = checkTargetUrl(url, { allowLoopback: config(env).allowLoopbackUrls });
  if (!check.ok) return { ok: false, reason: `The media URL ${check.reason}.`, transient: false };
  let res: Response;
  try {
    res = await fetch(check.url.toString(), { redirect: "manual", signal: AbortSignal.timeout(TIMEOUT_MS) });
  } catch {
    return { ok: false, reason: "The media URL could not be reached.", transient: true };
  }
  if (!res.ok || !res.body) {
    await res.body?.cancel();
    return { ok: false, reason: `The media URL answered HTTP ${res.status}.`, transient: res.status >= 500 || res.status === 429 };
  }
  const length = Number(res.headers.get("Content-Length") ?? NaN);
  return { ok: true, body: res.body, mimetype: res.headers.get("Content-Type"), size: Number.isFinite(length) ? length : null };
}

/**
 * One attempt at storing the file of an inbound message (run in the session's Durable Object,
 * with its driver). Answers what happened; the row is updated for `stored` and final failures.
 */
export async function fetchInboundMedia(env: Env, driver: NetworkDriver, accountId: string, messageId: string, lastAttempt: boolean): Promise<FetchOutcome> {
  const shard = await accountShard(env, accountId);
  const row = await messageById(shard, messageId);
  if (!row?.media || row.accountId !== accountId || !isFileType(row.type)) return { ok: true };
  const media = JSON.parse(row.media) as StoredMedia;
  if (media.status !== "pending") return { ok: true };
  const fail = async (reason: string, transient: boolean): Promise<FetchOutcome> => {
    if (!transient || lastAttempt) await settlePendingMedia(env, shard, row, { ...media, status: "failed", reason });
    return { ok: false, reason, transient };
  };
  const limit = MEDIA_LIMITS[row.type].maxBytes;
  let file: NetworkFile;
  if (media.networkMediaId) {
    if (!driver.fetchMedia) return fail("The network of this session cannot download media.", false);
    file = await driver.fetchMedia(media.networkMediaId);
  } else if (media.sourceUrl) file = await fetchUrl(env, media.sourceUrl);
  else return fail("The message names no file.", false);
  if (!file.ok) return fail(file.reason, file.transient);
  const tooLarge = () => new Error("too large");
  if (file.size !== null && file.size > limit) {
    await file.body.cancel();
    return fail(`${row.type} files are limited to ${limit} bytes; this one has ${file.size}.`, false);
  }
  let bytes: Uint8Array;
  try {
    bytes = await readCapped(file.body, limit, tooLarge);
  } catch (err) {
    if (err instanceof Error && err.message === "too large") return fail(`${row.type} files are limited to ${limit} bytes.`, false);
    return fail("The download was interrupted.", true);
  }
  const mimetype = media.mimetype ?? file.mimetype?.split(";")[0]?.trim() ?? "application/octet-stream";
  const storedId = await putFile(env, accountId, bytes, mimetype, media.filename);
  // Another attempt settled it meanwhile: this copy is nobody's.
  if (!(await settlePendingMedia(env, shard, row, { ...media, mimetype, mediaId: storedId, size: bytes.byteLength, status: "stored" }))) await env.FILES.delete(`media/${storedId}`);
  return { ok: true };
}
