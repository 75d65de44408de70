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
 *
 * A start is not an arrival: between the gate's turn and the request on the wire the attempt's isolate
 * may be busy (under load, a tenth of a second and more), so two starts a step apart can arrive close
 * together and a receiver's second hold one too many. The attempt therefore reports when its answer
 * came (`landed`): its request reached the receiver by then. The window counts from those times, so
 * an attempt starts only a second after the request `perSecond` places before it surely arrived. One
 * not reported within LANDED_CAP_MS (a slow or hung receiver, a caller gone) is taken to have arrived
 * by then: it holds the endpoint up that long at most.
 */
export interface Gate {
  /** Resolves when the attempt of this delivery may start (its turn came and its time is reached). */
  wait(deliveryId: string, notBefore: number): Promise<void>;
  /** These deliveries will not be attempted in this round: their turns pass to those behind them. */
  release(deliveryIds: string[]): void;
  /** The attempt of this delivery is over (answered or failed) at `at`: its request had arrived by then. */
  landed(deliveryId: string, at: number): void;
}

/** Lateness a timer or a round trip often has: within it the plan is kept (else a high rate would drift down). */
const LATE_MS = 20;
/** Waits for one start at most (each ends at its time or later; a bound all the same). */
const MAX_WAITS = 6;
/**
 * An attempt not reported landed this long after its start counts as arrived then. It bounds what
 * the window costs the rate, perSecond in 1 s + this at the least (within 10 %), whatever the
 * receiver's answers take or if they never come; it covers the usual delay of a busy isolate.
 */
export const LANDED_CAP_MS = 80;

/** A start in the window: when the attempt began, and when it was reported over (null: not yet). */
interface Start {
  at: number;
  landed: number | null;
  key: string | null;
  /** Wakes the turn waiting on this start's landing. */
  wake?: () => void;
}

interface Turn {
  /** Settles when the turn before this one is over. */
  prev: Promise<void>;
  /** Ends this turn (the attempt started, or was given up). */
  end: () => void;
}

export class SendGate implements Gate {
  private tail: Promise<void> = Promise.resolve();
  private readonly turns = new Map<string, Turn>();
  /** The latest attempts' starts, ascending: at most `perSecond` of them. */
  private recent: Start[] = [];
  /** Starts not yet reported landed, by delivery id (or an RPC caller's ticket). */
  private readonly open = new Map<string, Start>();
  private tickets = 0;
  /** Turns handed out and not over yet. */
  private waiting = 0;
  /** The previous attempt's planned start (the plan keeps even steps however late a timer fires). */
  private lastAt = 0;
  private perSecond: number;

  /**
   * `lastStart`: the latest start an earlier instance recorded; nothing starts within a second of
   * it (what else that second held is not known). `record` writes each start down. `settle`: an
   * I/O after which Date.now() is the true time (see above).
   */
  private readonly lastStart: number;
  private readonly record: (startedAt: number) => void;
  private readonly settle: () => Promise<void>;

  constructor(perSecond: number, lastStart: number, record: (startedAt: number) => void, settle: () => Promise<void> = async () => {}) {
    this.perSecond = perSecond;
    this.lastStart = lastStart;
    this.record = record;
    this.settle = settle;
  }

  setRate(perSecond: number): void {
    this.perSecond = perSecond;
    while (this.recent.length > perSecond) this.forget(this.recent.shift()!);
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
    if (!turn) return this.pass(this.nextTurn(), notBefore, deliveryId);
    this.turns.delete(deliveryId);
    await this.pass(turn, notBefore, deliveryId);
  }

  landed(key: string, at: number): void {
    const start = this.open.get(key);
    if (!start) return;
    this.open.delete(key);
    // Not before it started, not after now (a caller's clock is not trusted further).
    start.landed = Math.max(start.at, Math.min(Number.isFinite(at) ? at : Infinity, Date.now()));
    start.wake?.();
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

  /**
   * A turn at the end of the line, for an attempt made elsewhere (a queue consumer asking by RPC).
   * Answers the ticket its caller reports the attempt `landed` with.
   */
  async admit(notBefore: number): Promise<string> {
    const ticket = `#${++this.tickets}`;
    await this.pass(this.nextTurn(), notBefore, ticket);
    return ticket;
  }

  /** Turns handed out and not over yet (their attempts wait at the gate). */
  queued(): number {
    return this.waiting;
  }

  private nextTurn(): Turn {
    const prev = this.tail;
    let resolve!: () => void;
    this.tail = new Promise<void>((r) => (resolve = r));
    this.waiting++;
    let over = false;
    const end = () => {
      if (!over) this.waiting--;
      over = true;
      resolve();
    };
    return { prev, end };
  }

  private async pass(turn: Turn, notBefore: number, key: string): Promise<void> {
    try {
      await turn.prev;
      let at = this.earliest(notBefore);
      let now = await this.trueNow();
      // A timer never fires early, but its delay is whole ms: waited for again until the clock says so.
      // A landing reported meanwhile may bring the time forward: a wait also ends then.
      for (let waits = 0; at > now && waits < MAX_WAITS; waits++) {
        await this.sleep(at - now);
        now = await this.trueNow();
        at = this.earliest(notBefore);
      }
      // Late by more than half a step (or a timer's usual lag at high rates): on from now, never a burst to catch up.
      if (at < now - Math.max(500 / this.perSecond, LATE_MS)) at = now;
      const started = Math.max(now, at);
      this.lastAt = at;
      const start: Start = { at: started, landed: null, key };
      this.recent.push(start);
      if (this.recent.length > this.perSecond) this.forget(this.recent.shift()!);
      const stale = this.open.get(key);
      if (stale) stale.key = null;
      // Only starts in the window are open (bounded by the rate): one pushed out is no longer asked about.
      this.open.set(key, start);
      this.record(started);
    } finally {
      turn.end();
    }
  }

  /** Waits `ms`, or less if the start the window waits on is reported landed first. */
  private async sleep(ms: number): Promise<void> {
    const blocker = this.blocker();
    let timer: ReturnType<typeof setTimeout> | undefined;
    await new Promise<void>((resolve) => {
      timer = setTimeout(resolve, Math.ceil(ms));
      if (blocker) blocker.wake = resolve;
    });
    clearTimeout(timer);
    if (blocker) blocker.wake = undefined;
  }

  /** The start `perSecond` places back, if the window is full and it has not landed yet. */
  private blocker(): Start | undefined {
    const n = this.recent.length;
    const s = n >= this.perSecond ? this.recent[n - this.perSecond] : undefined;
    return s && s.landed === null ? s : undefined;
  }

  /** Out of the window (or past the bound): no longer waited on. */
  private forget(start: Start): void {
    if (start.key !== null && this.open.get(start.key) === start) this.open.delete(start.key);
    start.key = null;
  }

  private async trueNow(): Promise<number> {
    await this.settle();
    return Date.now();
  }

  private earliest(notBefore: number): number {
    const n = this.recent.length;
    const back = n >= this.perSecond ? this.recent[n - this.perSecond]! : undefined;
    // From when that request had surely arrived: reported, else its start and the cap.
    const windowFull = back ? Math.min(back.landed ?? Infinity, back.at + LANDED_CAP_MS) + 1000 : 0;
    const spaced = this.lastAt + 1000 / this.perSecond;
    return Math.max(notBefore, windowFull, spaced, this.lastStart + 1000);
  }
}
