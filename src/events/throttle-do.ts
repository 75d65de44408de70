import { DurableObject } from "cloudflare:workers";
import { attemptDeliveries } from "./delivery.ts";
import { SendGate } from "./send-gate.ts";
import { MAX_PER_SECOND, MAX_SLOTS_PER_CALL, MIN_PER_SECOND, SEND_NOW_MS } from "./throttle.ts";
import { log } from "../platform/log.ts";
import { shardAt } from "../platform/shards.ts";

export { MAX_PER_SECOND, MIN_PER_SECOND };
/**
 * Slots further ahead than this are kept here and their attempts made by the alarm, each at its
 * slot; nearer ones the caller makes at once. A slot handed to a queue is late by the queue's
 * latency (whole seconds of delay, and later under load), and late slots bunch: the rate then
 * overshoots within a second and falls short over the burst. Made from here they are on time.
 */
export const KEEP_AFTER_MS = SEND_NOW_MS;
/** The alarm takes the slots this close ahead and waits for each before its attempt. */
const RELEASE_AHEAD_MS = 1_000;
/** Alarms follow each other at least this far apart while slots wait (each takes RELEASE_AHEAD_MS of them). */
const ALARM_EVERY_MS = 500;
/** A caller writes the slots it got to D1 within this (the first alarm after a `schedule` waits for it). */
const WRITE_DOWN_MS = 250;
/** Deliveries attempted per alarm, at most (the next alarm follows at once). */
const RELEASE_MAX = 2_000;
/** Seconds of turns waiting at the gate beyond which an alarm takes no more deliveries. */
const BACKLOG_S = 2;
/** Storage key of the latest attempt's start. */
const LAST_START_KEY = "lastStart";

/**
 * One per throttled webhook (named by its id): hands out send slots at `perSecond`, spaced evenly,
 * first come first served. A single object per endpoint runs one call at a time, so the rate holds
 * however many queue consumers ask at once. The next free slot is written through to the object's
 * SQLite storage, and so are the deliveries waiting for a slot far ahead: its alarm hands each to
 * the throttle queue shortly before its slot (queue delays are whole seconds and, locally, late).
 * Every attempt to the endpoint, the alarm's and any a queue consumer makes, then passes the
 * object's gate (send-gate.ts), which times the attempts' starts so no second holds more than the rate.
 */
export class WebhookThrottleDO extends DurableObject<Env> {
  /** The next free slot (ms since the epoch, fractional: 1000 / perSecond need not be whole). */
  private next: number;
  private readonly gate: SendGate;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    ctx.storage.sql.exec("CREATE TABLE IF NOT EXISTS throttle (id INTEGER PRIMARY KEY CHECK (id = 1), next REAL NOT NULL)");
    ctx.storage.sql.exec("CREATE TABLE IF NOT EXISTS waiting (delivery_id TEXT PRIMARY KEY, slot INTEGER NOT NULL)");
    ctx.storage.sql.exec("CREATE INDEX IF NOT EXISTS waiting_slot ON waiting (slot)");
    // The shard of the webhook's account (it never changes): the queue messages of released deliveries name it.
    ctx.storage.sql.exec("CREATE TABLE IF NOT EXISTS shard (id INTEGER PRIMARY KEY CHECK (id = 1), shard INTEGER NOT NULL)");
    this.next = ctx.storage.sql.exec<{ next: number }>("SELECT next FROM throttle WHERE id = 1").toArray()[0]?.next ?? 0;
    ctx.storage.sql.exec("CREATE TABLE IF NOT EXISTS rate (id INTEGER PRIMARY KEY CHECK (id = 1), per_second INTEGER NOT NULL)");
    // Slots taken by an alarm of an earlier instance whose attempts never finished: taken again (leases guard the rest).
    ctx.storage.sql.exec("UPDATE waiting SET slot = -slot WHERE slot < 0");
    // The latest attempt's start, kept so that an instance that replaces one mid-burst spaces from it
    // (the `sent` table is where instances before the key kept it).
    ctx.storage.sql.exec("CREATE TABLE IF NOT EXISTS sent (id INTEGER PRIMARY KEY CHECK (id = 1), last REAL NOT NULL)");
    const kept = ctx.storage.sql.exec<{ last: number }>("SELECT last FROM sent WHERE id = 1").toArray()[0]?.last ?? 0;
    const last = Math.max(kept, Number(ctx.storage.kv.get(LAST_START_KEY)) || 0);
    this.gate = new SendGate(
      this.rate(),
      last,
      // Unconfirmed: the attempt that starts now is not held back until this write is on disk
      // (a Durable Object's requests wait for its confirmed writes).
      (at) => {
        ctx.storage.put(LAST_START_KEY, at, { allowUnconfirmed: true }).catch((err: unknown) => log.error("webhook throttle: last start not kept", { error: String(err) }));
      },
      // Writes committed (the attempt would wait for them) and, being I/O, a true clock after it.
      () => ctx.storage.sync(),
    );
  }

  /** The rate last asked for (the gate's until a caller says otherwise). */
  private rate(): number {
    return this.ctx.storage.sql.exec<{ per_second: number }>("SELECT per_second FROM rate WHERE id = 1").toArray()[0]?.per_second ?? MAX_PER_SECOND;
  }

  /**
   * Waits for the turn of an attempt a queue consumer is about to make (a slot handed back at once,
   * or one held from before): it starts when this answers, after the turns already queued. The
   * caller reports the attempt `landed` with the ticket answered.
   */
  async admit(perSecond: number, notBefore: number): Promise<string> {
    this.gate.setRate(clampRate(perSecond));
    return this.gate.admit(Number.isFinite(notBefore) ? notBefore : 0);
  }

  /** The attempt `admit` answered `ticket` for is over: its answer came (or it failed) at `at`. */
  landed(ticket: string, at: number): void {
    if (typeof ticket === "string" && ticket.length <= 24) this.gate.landed(ticket, Number(at));
  }

  /**
   * Reserves consecutive slots at `perSecond` for these deliveries, in order, and answers their
   * times (whole ms, ascending). A slot is never earlier than now: an idle endpoint's unused time is
   * not saved up into a burst. Slots more than KEEP_AFTER_MS ahead are kept (`kept`) and released by
   * the alarm; the caller queues the others. `shard`: where the deliveries' rows are (platform/shards.ts).
   */
  async schedule(perSecond: number, deliveryIds: string[], shard = 0): Promise<{ at: number; kept: boolean }[]> {
    const rate = clampRate(perSecond);
    this.gate.setRate(rate);
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
    this.ctx.storage.sql.exec("INSERT INTO rate (id, per_second) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET per_second = excluded.per_second", rate);
    if (kept) {
      this.ctx.storage.sql.exec("INSERT INTO shard (id, shard) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET shard = excluded.shard", Number.isInteger(shard) && shard >= 0 ? shard : 0);
      // Not before the caller has written the deliveries down as put off (else the alarm finds them still leased).
      await this.armFor(now + WRITE_DOWN_MS);
    }
    return slots;
  }

  /** Forgets reserved time and waiting deliveries (the endpoint's rate changed or was removed). */
  async reset(): Promise<void> {
    this.next = 0;
    this.ctx.storage.sql.exec("DELETE FROM throttle");
    this.ctx.storage.sql.exec("DELETE FROM waiting");
    this.ctx.storage.sql.exec("DELETE FROM rate");
    await this.ctx.storage.deleteAlarm();
  }

  /**
   * Makes the attempts whose slots are near, each at its slot (`attemptDeliveries` with the held
   * slots: D1 says when each is due, and its lease keeps a duplicate from sending twice). Not
   * awaited: while they wait for their slots the next alarm (ALARM_EVERY_MS on) takes the next ones,
   * so a slow round trip never makes the following slots late. Taken slots are stored negated until
   * their attempts are recorded; a failure (or an object that went away meanwhile: see the
   * constructor) puts them back for the next alarm.
   */
  override async alarm(): Promise<void> {
    const now = Date.now();
    // At most the rate's share of the time to the next alarm: slots an alarm finds late (the object was
    // busy or slow) go out at the rate, spaced (throttle.ts spaceOut), never in one burst.
    const perSecond = this.rate();
    const take = Math.min(RELEASE_MAX, Math.max(1, Math.ceil((perSecond * ALARM_EVERY_MS) / 1000)));
    // The gate may run behind the slots (it waits for requests to land): while it holds BACKLOG_S of
    // turns, none are taken, so no taken delivery waits at it until its lease runs out (and is sent twice).
    if (this.gate.queued() >= perSecond * BACKLOG_S) {
      await this.armFor(now + ALARM_EVERY_MS);
      return;
    }
    const due = this.ctx.storage.sql
      .exec<{ delivery_id: string }>("SELECT delivery_id FROM waiting WHERE slot > 0 AND slot <= ? ORDER BY slot LIMIT ?", now + RELEASE_AHEAD_MS, take)
      .toArray()
      .map((r) => r.delivery_id);
    const shard = this.ctx.storage.sql.exec<{ shard: number }>("SELECT shard FROM shard WHERE id = 1").toArray()[0]?.shard ?? 0;
    for (const id of due) this.ctx.storage.sql.exec("UPDATE waiting SET slot = -slot WHERE delivery_id = ? AND slot > 0", id);
    await this.armFor(now + ALARM_EVERY_MS);
    if (due.length === 0) return;
    // Their turns at the gate in slot order now, before any round trip: a later alarm's come after them.
    this.gate.issue(due);
    void attemptDeliveries(this.env, shardAt(this.env, shard), due, now, true, this.gate).then(
      async (reports) => {
        this.gate.release(due);
        // One still held by its caller (not yet written down as put off) keeps its slot: the next alarm tries again, in order.
        const busy = new Set(due.filter((_, i) => reports[i]?.attempted === false && reports[i].reason === "busy"));
        for (const id of due) this.ctx.storage.sql.exec(busy.has(id) ? "UPDATE waiting SET slot = -slot WHERE delivery_id = ? AND slot < 0" : "DELETE FROM waiting WHERE delivery_id = ? AND slot < 0", id);
        if (busy.size > 0) await this.armFor(Date.now() + ALARM_EVERY_MS).catch(() => {});
      },
      async (err: unknown) => {
        this.gate.release(due);
        log.error("throttled attempts failed; retried by the next alarm", { count: due.length, error: String(err) });
        for (const id of due) this.ctx.storage.sql.exec("UPDATE waiting SET slot = -slot WHERE delivery_id = ? AND slot < 0", id);
        await this.armFor(Date.now() + ALARM_EVERY_MS).catch(() => {});
      },
    );
  }

  private async armFor(notBefore: number): Promise<void> {
    // Slots under way in an alarm are stored negated: not taken again meanwhile.
    const first = this.ctx.storage.sql.exec<{ slot: number | null }>("SELECT min(slot) AS slot FROM waiting WHERE slot > 0").one().slot;
    if (first === null) return;
    const when = Math.max(notBefore, first - RELEASE_AHEAD_MS);
    const current = await this.ctx.storage.getAlarm();
    if (current === null || current > when) await this.ctx.storage.setAlarm(when);
  }
}

function clampRate(perSecond: number): number {
  return Math.min(MAX_PER_SECOND, Math.max(MIN_PER_SECOND, Math.floor(perSecond) || MIN_PER_SECOND));
}
