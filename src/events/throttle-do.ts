import { DurableObject } from "cloudflare:workers";
import { chunk, QUEUE_BATCH_MAX } from "../platform/batching.ts";
import type { DeliveryQueueMessage } from "./types.ts";

/** Bounds of a webhook's `maxPerSecond` (the API validates them; the object clamps again). */
export const MIN_PER_SECOND = 1;
export const MAX_PER_SECOND = 1000;
/** Slots one call may reserve (a consumer asks for at most one chunk of deliveries at a time). */
export const MAX_SLOTS_PER_CALL = 100;
/** Slots further ahead than this are kept here and released by the alarm; nearer ones the caller queues itself. */
export const KEEP_AFTER_MS = 2_000;
/** The alarm hands a slot to the throttle queue this long before it (its consumer waits out the rest). */
const RELEASE_AHEAD_MS = 1_000;
/** Deliveries released per alarm, at most (the next alarm follows at once). */
const RELEASE_MAX = 2_000;

/**
 * One per throttled webhook (named by its id): hands out send slots at `perSecond`, spaced evenly,
 * first come first served. A single object per endpoint runs one call at a time, so the rate holds
 * however many queue consumers ask at once. The next free slot is written through to the object's
 * SQLite storage, and so are the deliveries waiting for a slot far ahead: its alarm hands each to
 * the throttle queue shortly before its slot (queue delays are whole seconds and, locally, late).
 */
export class WebhookThrottleDO extends DurableObject<Env> {
  /** The next free slot (ms since the epoch, fractional: 1000 / perSecond need not be whole). */
  private next: number;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    ctx.storage.sql.exec("CREATE TABLE IF NOT EXISTS throttle (id INTEGER PRIMARY KEY CHECK (id = 1), next REAL NOT NULL)");
    ctx.storage.sql.exec("CREATE TABLE IF NOT EXISTS waiting (delivery_id TEXT PRIMARY KEY, slot INTEGER NOT NULL)");
    ctx.storage.sql.exec("CREATE INDEX IF NOT EXISTS waiting_slot ON waiting (slot)");
    // The shard of the webhook's account (it never changes): the queue messages of released deliveries name it.
    ctx.storage.sql.exec("CREATE TABLE IF NOT EXISTS shard (id INTEGER PRIMARY KEY CHECK (id = 1), shard INTEGER NOT NULL)");
    this.next = ctx.storage.sql.exec<{ next: number }>("SELECT next FROM throttle WHERE id = 1").toArray()[0]?.next ?? 0;
  }

  /**
   * Reserves consecutive slots at `perSecond` for these deliveries, in order, and answers their
   * times (whole ms, ascending). A slot is never earlier than now: an idle endpoint's unused time is
   * not saved up into a burst. Slots more than KEEP_AFTER_MS ahead are kept (`kept`) and released by
   * the alarm; the caller queues the others. `shard`: where the deliveries' rows are (platform/shards.ts).
   */
  async schedule(perSecond: number, deliveryIds: string[], shard = 0): Promise<{ at: number; kept: boolean }[]> {
    const rate = Math.min(MAX_PER_SECOND, Math.max(MIN_PER_SECOND, Math.floor(perSecond) || MIN_PER_SECOND));
    const ids = deliveryIds.slice(0, MAX_SLOTS_PER_CALL);
    const interval = 1000 / rate;
    const now = Date.now();
    let at = Math.max(now, this.next);
    const slots: { at: number; kept: boolean }[] = [];
    let kept = false;
    for (const id of ids) {
      const slot = Math.ceil(at);
      slots.push({ at: slot, kept: slot > now + KEEP_AFTER_MS });
      if (slot > now + KEEP_AFTER_MS) {
        this.ctx.storage.sql.exec("INSERT INTO waiting (delivery_id, slot) VALUES (?, ?) ON CONFLICT (delivery_id) DO UPDATE SET slot = excluded.slot", id, slot);
        kept = true;
      }
      at += interval;
    }
    this.next = at;
    this.ctx.storage.sql.exec("INSERT INTO throttle (id, next) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET next = excluded.next", at);
    if (kept) {
      this.ctx.storage.sql.exec("INSERT INTO shard (id, shard) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET shard = excluded.shard", Number.isInteger(shard) && shard >= 0 ? shard : 0);
      await this.armFor(now);
    }
    return slots;
  }

  /** Forgets reserved time and waiting deliveries (the endpoint's rate changed or was removed). */
  async reset(): Promise<void> {
    this.next = 0;
    this.ctx.storage.sql.exec("DELETE FROM throttle");
    this.ctx.storage.sql.exec("DELETE FROM waiting");
    await this.ctx.storage.deleteAlarm();
  }

  /** Hands the deliveries whose slot is near to the throttle queue (D1 still says when each is due). */
  override async alarm(): Promise<void> {
    const now = Date.now();
    const due = this.ctx.storage.sql
      .exec<{ delivery_id: string }>("SELECT delivery_id FROM waiting WHERE slot <= ? ORDER BY slot LIMIT ?", now + RELEASE_AHEAD_MS, RELEASE_MAX)
      .toArray()
      .map((r) => r.delivery_id);
    const shard = this.ctx.storage.sql.exec<{ shard: number }>("SELECT shard FROM shard WHERE id = 1").toArray()[0]?.shard ?? 0;
    for (const part of chunk(due, QUEUE_BATCH_MAX)) {
      // A failed send throws: the alarm is retried, and what was sent stays sent (receivers deduplicate; leases guard).
      await this.env.THROTTLE_QUEUE.sendBatch(part.map((id) => ({ body: { kind: "delivery", id, shard } satisfies DeliveryQueueMessage, contentType: "json" as const })));
      for (const id of part) this.ctx.storage.sql.exec("DELETE FROM waiting WHERE delivery_id = ?", id);
    }
    await this.armFor(now);
  }

  private async armFor(now: number): Promise<void> {
    const first = this.ctx.storage.sql.exec<{ slot: number | null }>("SELECT min(slot) AS slot FROM waiting").one().slot;
    if (first === null) return;
    const when = Math.max(now, first - RELEASE_AHEAD_MS);
    const current = await this.ctx.storage.getAlarm();
    if (current === null || current > when) await this.ctx.storage.setAlarm(when);
  }
}
