import { enqueueRecorded } from "./emit.ts";
import { claimFanOut, FANOUT_PART } from "./first-attempts.ts";
import type { EventRecord } from "./types.ts";
import { chunk } from "../platform/batching.ts";
import { usageFields, withD1Usage } from "../platform/d1-usage.ts";
import { InFlight } from "../platform/in-flight.ts";
import { log } from "../platform/log.ts";
import type { Shard } from "../platform/shards.ts";

/** Fan-outs one owner (a session's Durable Object) runs at once; past it, events take the queue. */
const IN_FLIGHT_MAX = 4;

/** Sees each event fanned out here before its attempts (the test Worker's tap: the queue's consumer sees the others). */
let observe: ((shard: Shard, records: EventRecord[]) => Promise<void>) | null = null;

/** Installs the observer of events fanned out without the queue (tests only; null removes it). */
export function observeFanOutNow(fn: typeof observe): void {
  observe = fn;
}

/**
 * Fans recorded events out where they were recorded, without the events queue: the same claim,
 * rows and first attempts as the events consumer (first-attempts.ts), so a webhook follows its cause
 * by one D1 round trip and the receiver's answer, not a queue hop and a consumer batch. The queue
 * stays the path for everything this does not take:
 *
 * - past IN_FLIGHT_MAX fan-outs under way (a slow receiver holds its fan-out up to the webhook
 *   timeout), the events go on the queue at once, so an owner never piles work up behind one;
 * - a fan-out that fails (D1, or recording the outcomes) has given up its leases: its events go on
 *   the queue and the consumer tries again (same `webhook-id`s: receivers deduplicate);
 * - if the owner is lost mid-way, the leases lapse and the cron's stranded-event pass enqueues them.
 *
 * One per owner; each owner's events are one account's, so one account's receivers hold only its
 * own fan-outs.
 */
export class FanOutNow {
  private readonly inFlight: InFlight;

  constructor(
    private readonly env: Env,
    private readonly label: Record<string, unknown> = {},
    max = IN_FLIGHT_MAX,
  ) {
    this.inFlight = new InFlight(max);
  }

  /** Fans `records` (recorded in `shard`) out. Never throws; resolves when their attempts are recorded or queued. */
  async run(shard: Shard, records: EventRecord[]): Promise<void> {
    if (observe) await observe(shard, records).catch((err: unknown) => log.error("fan-out observer failed", { error: String(err) }));
    await Promise.all(chunk(records, FANOUT_PART).map((part) => this.part(shard, part)));
  }

  private async part(shard: Shard, records: EventRecord[]): Promise<void> {
    const release = this.inFlight.tryAcquire();
    if (!release) {
      await enqueueRecorded(this.env, shard, records);
      return;
    }
    try {
      const { usage } = await withD1Usage(async () => {
        const claim = await claimFanOut(this.env, shard, records.map((r) => r.id), Date.now(), new Map(records.map((r) => [r.id, r])));
        await claim.rows();
        await claim.attempts();
      });
      log.info("event attempts", { ...this.label, events: records.length, ...usageFields(usage) });
    } catch (err) {
      log.error("event fan-out failed; events queued", { ...this.label, events: records.length, error: String(err) });
      await enqueueRecorded(this.env, shard, records);
    } finally {
      release();
    }
  }
}
