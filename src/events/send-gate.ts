import { log } from "../platform/log.ts";

/**
 * The last step before a throttled endpoint is called: every attempt passes its endpoint's gate
 * (held by the endpoint's WebhookThrottleDO) one after the other, and the gate lets an attempt start
 * no earlier than its slot, an interval (1 s / perSecond) after the previous one's planned start, and
 * no earlier than one second after the real start of the attempt `perSecond` places before it. Slots
 * alone space attempts evenly, but an attempt starts late when its batch's D1 round trip was slow,
 * and late attempts of one batch would then start together with the next batch's on-time ones: the
 * gate times starts, not slots, so no one second holds more than `perSecond` whatever ran late. An
 * attempt found late is not caught up on: the plan moves on from it, evenly spaced (a second packed
 * with attempts would let the network's jitter push one more into it at the receiver).
 *
 * Lateness is only seen through `settle`. In workerd, Date.now() inside a timer's callback is the
 * time the timer was due, however late it ran, and a timer set from there counts from that time:
 * after the isolate was held up, each following wait would end at once and the late starts go out
 * together. The gate therefore reads the clock after `settle` (an I/O: the object's storage writes
 * committed, which its requests wait for anyway), and times every start and wait from that reading.
 */
export interface Gate {
  /** Resolves when the attempt of this delivery may start (its turn came and its time is reached). */
  wait(deliveryId: string, notBefore: number): Promise<void>;
  /** These deliveries will not be attempted in this round: their turns pass to those behind them. */
  release(deliveryIds: string[]): void;
}

/** Lateness a timer or a round trip often has: within it the plan is kept (else a high rate would drift down). */
const LATE_MS = 20;
/** Waits for one start at most (each ends at its time or later; a bound all the same). */
const MAX_WAITS = 5;

interface Turn {
  /** Settles when the turn before this one is over. */
  prev: Promise<void>;
  /** Ends this turn (the attempt started, or was given up). */
  end: () => void;
}

export class SendGate implements Gate {
  private tail: Promise<void> = Promise.resolve();
  private readonly turns = new Map<string, Turn>();
  /** Real start times of the latest attempts, ascending: at most `perSecond` of them. */
  private recent: number[] = [];
  /** The previous attempt's planned start (the plan keeps even steps however late a timer fires). */
  private lastAt = 0;
  private perSecond: number;

  /**
   * `lastStart`: the latest start an earlier instance recorded; nothing starts within a second of
   * it (what else that second held is not known). `record` writes each start down. `settle`: an
   * I/O after which Date.now() is the true time (see above).
   */
  constructor(
    perSecond: number,
    private readonly lastStart: number,
    private readonly record: (startedAt: number) => void,
    private readonly settle: () => Promise<void> = async () => {},
  ) {
    this.perSecond = perSecond;
  }

  setRate(perSecond: number): void {
    this.perSecond = perSecond;
    if (this.recent.length > perSecond) this.recent = this.recent.slice(-perSecond);
  }

  /** Queues turns for these deliveries, in this order, behind every turn already queued. */
  issue(deliveryIds: string[]): void {
    for (const id of deliveryIds) {
      this.release([id]);
      this.turns.set(id, this.nextTurn());
    }
  }

  async wait(deliveryId: string, notBefore: number): Promise<void> {
    const turn = this.turns.get(deliveryId);
    if (!turn) return this.admit(notBefore);
    this.turns.delete(deliveryId);
    await this.pass(turn, notBefore);
  }

  release(deliveryIds: string[]): void {
    for (const id of deliveryIds) {
      const turn = this.turns.get(id);
      if (!turn) continue;
      this.turns.delete(id);
      // In order: the turns behind it still wait for the ones before it.
      void turn.prev.then(turn.end);
    }
  }

  /** A turn at the end of the line, for an attempt made elsewhere (a queue consumer asking by RPC). */
  async admit(notBefore: number): Promise<void> {
    await this.pass(this.nextTurn(), notBefore);
  }

  private nextTurn(): Turn {
    const prev = this.tail;
    let end!: () => void;
    this.tail = new Promise<void>((r) => (end = r));
    return { prev, end };
  }

  private async pass(turn: Turn, notBefore: number): Promise<void> {
    try {
      await turn.prev;
      let at = this.earliest(notBefore);
      let now = await this.trueNow();
      // A timer never fires early, but its delay is whole ms: waited for again until the clock says so.
      for (let waits = 0; at > now && waits < MAX_WAITS; waits++) {
        await new Promise((r) => setTimeout(r, Math.ceil(at - now)));
        now = await this.trueNow();
      }
      // Late by more than half a step (or a timer's usual lag at high rates): on from now, never a burst to catch up.
      if (at < now - Math.max(500 / this.perSecond, LATE_MS)) at = now;
      const started = Math.max(now, at);
      this.lastAt = at;
      this.recent.push(started);
      if (this.recent.length > this.perSecond) this.recent.shift();
      this.record(started);
    } finally {
      turn.end();
    }
  }

  private async trueNow(): Promise<number> {
    await this.settle();
    return Date.now();
  }

  private earliest(notBefore: number): number {
    const n = this.recent.length;
    const windowFull = n >= this.perSecond ? this.recent[n - this.perSecond]! + 1000 : 0;
    const spaced = this.lastAt + 1000 / this.perSecond;
    return Math.max(notBefore, windowFull, spaced, this.lastStart + 1000);
  }
}

/**
 * Waits for a throttled attempt's turn at its endpoint's gate: the throttle object's own (its alarm
 * makes the attempt), else by RPC to the endpoint's object. An object that cannot be asked leaves
 * the attempt to its slot alone (logged): late rather than lost.
 */
export async function waitForTurn(env: Env, gate: Gate | undefined, deliveryId: string, webhookId: string, perSecond: number, notBefore: number): Promise<void> {
  if (gate) return gate.wait(deliveryId, notBefore);
  try {
    await env.WEBHOOK_THROTTLES.get(env.WEBHOOK_THROTTLES.idFromName(webhookId)).admit(perSecond, notBefore);
  } catch (err) {
    log.error("webhook throttle gate unavailable; attempt made at its slot", { webhookId, error: String(err) });
    if (notBefore > Date.now()) await new Promise((r) => setTimeout(r, notBefore - Date.now()));
  }
}
