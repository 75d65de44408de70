import { afterEach, describe, expect, it, vi } from "vitest";
import { LANDED_CAP_MS, SendGate } from "../../src/events/send-gate.ts";
import { observedRate } from "../support/throttle-rate.ts";

// Pure logic on a faked clock, so in Node: faked timers in the Workers suite's shared runtime also catch
// the timers of Durable Objects still busy from an earlier file, and fire them outside their object.
// The gate's own clock is driven here (fake timers): a start made late by a busy isolate is placed
// exactly, so the rules are checked to the millisecond whatever the machine's load. Attempts report
// themselves landed at once unless a test says otherwise (see the last describe).
describe("send gate: starts after a late one", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("keeps every perSecond + 2 consecutive starts at least a second and a step apart, so a step of jitter never puts more than perSecond + 1 in a receiver's second", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "Date"] });
    vi.setSystemTime(1_000_000);
    const rate = 10;
    const step = 1000 / rate;
    const starts: number[] = [];
    const gate = new SendGate(rate, 0, (at) => {
      starts.push(at);
      // The third start's isolate is busy for 150 ms: the fourth starts late, within the lateness the plan keeps.
      if (starts.length === 3) vi.setSystemTime(Date.now() + 150);
    });
    const all = Promise.all(Array.from({ length: 30 }, async () => gate.landed(await gate.admit(0), Date.now())));
    await vi.advanceTimersByTimeAsync(10_000);
    await all;
    expect(starts).toHaveLength(30);
    // The late start is followed by one only half a step after it (the plan moves on evenly)...
    expect(starts[4]! - starts[3]!).toBeLessThan(step);
    for (let k = 0; k + rate + 1 < starts.length; k++) expect(starts[k + rate + 1]! - starts[k]!).toBeGreaterThanOrEqual(1000 + step);
    // ...so at the receiver, arrivals each displaced by up to a step (the late one by all of it) hold at most rate + 1 a second.
    const worst = starts.map((t, i) => t + (i % 2 === 0 ? step - 1 : 0));
    expect(observedRate(worst).maxInOneSecond).toBeLessThanOrEqual(rate + 1);
    expect(observedRate(starts).maxInOneSecond).toBeLessThanOrEqual(rate);
    // The guard costs the average rate nothing beyond the late start: 30 starts in under 3.1 s.
    expect(starts[29]! - starts[0]!).toBeLessThanOrEqual(29 * step + 150);
  });
});

// workerd's clock inside a timer's callback is the time the timer was due, however late it ran, and a
// timer set from there counts from that time (the time only reads true after I/O). Modelled here on
// fake timers: after a busy stretch of the isolate, a gate that timed its next wait from that clock
// would find every following wait over at once and start the late attempts together.
describe("send gate: a clock that stands still in a late timer's callback", () => {
  const realSetTimeout = globalThis.setTimeout;
  afterEach(() => {
    globalThis.setTimeout = realSetTimeout;
    vi.restoreAllMocks();
    vi.useRealTimers();
  });

  it("reads the time after settling (an I/O) and spaces the starts after a stall from the true time", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "Date"] });
    vi.setSystemTime(1_000_000);
    const fakeSetTimeout = globalThis.setTimeout;
    const trueNow = Date.now.bind(Date);
    let standsAt: number | null = null;
    vi.spyOn(Date, "now").mockImplementation(() => standsAt ?? trueNow());
    // A timer is due at the (possibly standing) clock plus its delay; in its callback the clock stands at that time.
    globalThis.setTimeout = ((fn: () => void, ms = 0) => {
      const due = Date.now() + ms;
      return fakeSetTimeout(() => {
        standsAt = due;
        fn();
        // The callback's microtasks run at the standing time; a task after them reads the true one.
        fakeSetTimeout(() => (standsAt = null), 0);
      }, Math.max(0, due - trueNow()));
    }) as typeof setTimeout;
    // I/O: the continuation is a task of its own, after which the clock reads true.
    const settle = () => new Promise<void>((r) => fakeSetTimeout(() => ((standsAt = null), r()), 0));

    const rate = 10;
    const step = 1000 / rate;
    const starts: number[] = [];
    const gate = new SendGate(
      rate,
      0,
      () => {
        starts.push(trueNow());
        // After the third start the isolate is busy for 350 ms (no timer runs meanwhile).
        if (starts.length === 3) vi.setSystemTime(trueNow() + 350);
      },
      settle,
    );
    const all = Promise.all(Array.from({ length: 20 }, async () => gate.landed(await gate.admit(0), Date.now())));
    await vi.advanceTimersByTimeAsync(10_000);
    await all;
    expect(starts).toHaveLength(20);
    expect(starts[3]! - starts[2]!).toBeGreaterThanOrEqual(350);
    // No catch-up: each start a full step after the one before, counted from when it really began.
    for (let k = 3; k + 1 < starts.length; k++) expect(starts[k + 1]! - starts[k]!, `start ${k + 1}`).toBeGreaterThanOrEqual(step);
    expect(observedRate(starts).maxInOneSecond).toBeLessThanOrEqual(rate);
  });
});

// Between the gate's turn and the request on the wire the attempt's isolate may be busy: the request
// arrives later than its start by a varying delay. Modelled on fake timers: each attempt's request
// arrives `delay` after its start and its answer a millisecond later, when it reports itself landed.
describe("send gate: requests that reach the receiver later than their start", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  async function run(rate: number, count: number, delayOf: (k: number) => number | null) {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "Date"] });
    vi.setSystemTime(1_000_000);
    const starts: number[] = [];
    const arrivals: number[] = [];
    const gate = new SendGate(rate, 0, (at) => starts.push(at));
    const all = Promise.all(
      Array.from({ length: count }, async () => {
        const ticket = await gate.admit(0);
        const delay = delayOf(arrivals.length);
        arrivals.push(Date.now() + (delay ?? 0));
        // null: a receiver that never answers (the attempt times out long after).
        if (delay !== null) setTimeout(() => gate.landed(ticket, Date.now()), delay + 1);
      }),
    );
    await vi.advanceTimersByTimeAsync(count * 2_000);
    await all;
    return { starts, arrivals };
  }

  it("counts the window from each request's landing, so a delayed one never puts perSecond + 1 in a receiver's second", async () => {
    const rate = 10;
    // Every third request is held up 75 ms on its way (within the cap): timed from starts alone, it
    // would share a second with the perSecond requests after it.
    const { starts, arrivals } = await run(rate, 60, (k) => (k % 3 === 0 ? LANDED_CAP_MS - 5 : 5));
    expect(starts).toHaveLength(60);
    expect(observedRate(arrivals).maxInOneSecond).toBeLessThanOrEqual(rate);
    for (let k = 0; k + rate < arrivals.length; k++) expect(arrivals[k + rate]! - arrivals[k]!, `arrival ${k + rate}`).toBeGreaterThanOrEqual(1000);
    // The rate given up is the requests' delay, no more: within 10 %.
    expect(observedRate(arrivals).perSecond).toBeGreaterThanOrEqual(rate * 0.9);
  });

  it("a receiver that never answers holds each start up LANDED_CAP_MS at most: the endpoint keeps going", async () => {
    const rate = 10;
    const { starts } = await run(rate, 40, () => null);
    expect(starts).toHaveLength(40);
    for (let k = 0; k + rate < starts.length; k++) expect(starts[k + rate]! - starts[k]!).toBeGreaterThanOrEqual(1000 + LANDED_CAP_MS);
    // 40 starts: 3 windows of a second and the cap, then the last steps.
    expect(starts[39]! - starts[0]!).toBeLessThanOrEqual(3 * (1000 + LANDED_CAP_MS) + 9 * 100 + 50);
  });

  it("counts the turns still waiting (the throttle object takes no more while a backlog waits)", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "Date"] });
    vi.setSystemTime(1_000_000);
    const gate = new SendGate(10, 0, () => {});
    gate.issue(["a", "b", "c"]);
    const d = gate.admit(0);
    expect(gate.queued()).toBe(4);
    gate.release(["b"]);
    await gate.wait("a", 0);
    await vi.advanceTimersByTimeAsync(0);
    expect(gate.queued()).toBe(2);
    const c = gate.wait("c", 0);
    await vi.advanceTimersByTimeAsync(1_000);
    await Promise.all([c, d]);
    expect(gate.queued()).toBe(0);
  });
});
