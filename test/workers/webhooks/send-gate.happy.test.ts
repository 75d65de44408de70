import { afterEach, describe, expect, it, vi } from "vitest";
import { SendGate } from "../../../src/events/send-gate.ts";
import { observedRate } from "../../support/throttle-rate.ts";

// The gate's own clock is driven here (fake timers): a start made late by a busy isolate is placed
// exactly, so the rules are checked to the millisecond whatever the machine's load.
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
    const all = Promise.all(Array.from({ length: 30 }, () => gate.admit(0)));
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
