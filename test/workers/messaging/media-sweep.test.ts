import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { SWEEP_AFTER_MS, SWEEP_BUDGET, SWEEP_CAP, SWEEP_FAILED_REASON, sweepPendingMedia } from "../../../src/messaging/media/sweep.ts";
import { inboundRow } from "../../../src/messaging/store/rows.ts";
import { insertStatement } from "../../../src/messaging/store/writes.ts";
import { newId } from "../../../src/platform/ids.ts";
import { handleScheduled } from "../../../src/scheduled.ts";
import { createKey, firstOnShards, shardD1 } from "../helpers.ts";
import { downloadMedia, fakeMedia, fakeMediaDownloads, waitFor } from "./support.ts";
import { whatsappSession } from "./whatsapp-support.ts";
import { accountShard } from "../../../src/platform/shards.ts";

const MIN = 60_000;
const JPEG = Uint8Array.from([0xff, 0xd8, 0xff, 0xe0, 0, 0x10, 0x4a, 0x46, 0x49, 0x46, 0, 1, 2, 3, 4, 5]);

/**
 * An inbound image whose row was written but whose fetch was never queued (the queue send failed
 * after the insert; a replay of the webhook is deduplicated and queues nothing).
 */
async function strandedImage(accountId: string, sessionId: string, networkMediaId: string, createdAt: number): Promise<string> {
  const id = newId("msg", createdAt);
  const row = inboundRow(id, accountId, sessionId, {
    externalId: `wamid.stranded-${id}`,
    from: "16505559999",
    timestamp: createdAt,
    type: "image",
    media: { mimetype: "image/jpeg", filename: null, caption: null, networkMediaId },
  });
  await insertStatement(await accountShard(env, accountId), row);
  return id;
}

async function mediaOf(id: string): Promise<{ status: string; sweeps?: number; reason?: string }> {
  const row = await firstOnShards<{ media: string }>("SELECT media FROM messages WHERE id = ?", id);
  return JSON.parse(row!.media) as { status: string; sweeps?: number; reason?: string };
}

const mediaEvents = async (accountId: string) =>
  (await shardD1(accountId)).prepare("SELECT type, json_extract(payload, '$.data.id') AS id FROM events WHERE account_id = ? AND type LIKE 'message.media_%'").bind(accountId).all<{ type: string; id: string }>();

/**
 * The budget and cap tests count what the sweep queues without running the fetches (the first
 * test runs them for real, through the queue and the Session DO).
 */
const queued: string[] = [];
const record = async (_env: Env, _sessionId: string, ids: string[]) => void queued.push(...ids);

describe("messaging: the cron sweeps inbound files left pending", () => {
  it("a file whose fetch was never queued is queued again by the cron, once it is old enough, and stored", async () => {
    const k = await createKey("pro");
    const { phone, session } = await whatsappSession(k.key);
    const mediaId = await fakeMedia(phone.phoneNumberId, JPEG, "image/jpeg");
    const created = Date.now();
    const id = await strandedImage(k.accountId, session.id, mediaId, created);

    // Young: a queued job may still be working on it.
    await handleScheduled({ scheduledTime: created + SWEEP_AFTER_MS - MIN } as ScheduledController, env);
    expect(await mediaOf(id)).toEqual(expect.objectContaining({ status: "pending" }));
    expect((await mediaOf(id)).sweeps).toBeUndefined();

    await handleScheduled({ scheduledTime: created + SWEEP_AFTER_MS + MIN } as ScheduledController, env);
    expect(await mediaOf(id)).toMatchObject({ status: "pending", sweeps: 1 });
    await waitFor(async () => (await mediaOf(id)).status === "stored", 15_000, "swept file stored");
    expect(await fakeMediaDownloads(mediaId)).toBe(1);
    const got = await downloadMedia(k.key, id);
    expect(got).toMatchObject({ status: 200, type: "image/jpeg", bytes: JPEG });
    expect((await mediaEvents(k.accountId)).results).toEqual([{ type: "message.media_stored", id }]);
  });

  it(`after ${SWEEP_BUDGET} sweeps a file still pending is failed, announced once as message.media_failed`, async () => {
    const k = await createKey("pro");
    // No such session: each queued fetch ends at once without settling the file (it stays pending).
    const sessionId = newId("ses");
    const created = Date.now();
    const id = await strandedImage(k.accountId, sessionId, "424242", created);
    let now = created;
    for (let sweep = 1; sweep <= SWEEP_BUDGET; sweep++) {
      now += SWEEP_AFTER_MS + MIN;
      await sweepPendingMedia(env, now, undefined, record);
      expect(await mediaOf(id)).toMatchObject({ status: "pending", sweeps: sweep });
      // Not again before SWEEP_AFTER_MS has passed since this sweep.
      await sweepPendingMedia(env, now + MIN, undefined, record);
      expect((await mediaOf(id)).sweeps).toBe(sweep);
    }
    now += SWEEP_AFTER_MS + MIN;
    await sweepPendingMedia(env, now, undefined, record);
    expect(await mediaOf(id)).toMatchObject({ status: "failed", reason: SWEEP_FAILED_REASON });
    await sweepPendingMedia(env, now + 10 * SWEEP_AFTER_MS, undefined, record);
    expect((await mediaEvents(k.accountId)).results).toEqual([{ type: "message.media_failed", id }]);
  });

  it(`one run takes at most ${SWEEP_CAP} files, the oldest first; the next run the rest`, async () => {
    const k = await createKey("pro");
    const sessionId = newId("ses");
    // Older than any other test's rows, so these are the oldest pending files.
    const ids: string[] = [];
    for (let i = 0; i < SWEEP_CAP + 5; i++) ids.push(await strandedImage(k.accountId, sessionId, "434343", 1_000 + i));
    const swept = async () =>
      (await (await shardD1(k.accountId)).prepare("SELECT id FROM messages WHERE session_id = ? AND json_extract(media, '$.sweeps') = 1 ORDER BY created_at").bind(sessionId).all<{ id: string }>()).results.map((r) => r.id);
    const now = Date.now();
    const first = await sweepPendingMedia(env, now, undefined, record);
    expect(first.requeued).toBe(SWEEP_CAP);
    expect(queued.filter((q) => ids.includes(q))).toEqual(ids.slice(0, SWEEP_CAP));
    expect(await swept()).toEqual(ids.slice(0, SWEEP_CAP));
    await sweepPendingMedia(env, now, undefined, record);
    expect(await swept()).toEqual(ids);
  });
});
