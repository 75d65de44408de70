import { afterEach, describe, expect, it, vi } from "vitest";
import { LANDED_CAP_MS, SendGate } from "../../src/events/send-gate.ts";

// Pure logic on a faked clock, so in Node: faked timers in the Workers suite's shared runtime also catch
// the timers of Durable Objects still busy from an earlier file, and fire them outside their object.
// Landings are reported by the attempts themselves (by RPC from a queue consumer): a report for
// another ticket, a repeated one or one with a clock from elsewhere must not open the window early
// or hold it shut.
describe("send gate: landing reports it must not believe", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("a landing reported for another ticket, twice, late or with a clock from the future changes nothing it should not", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "Date"] });
    vi.setSystemTime(1_000_000);
    const starts: number[] = [];
    const gate = new SendGate(2, 0, (at) => starts.push(at));
    const first = await gate.admit(0);
    gate.landed("#nope", Date.now());
    // A claimed landing in the future is taken as now at most.
    gate.landed(first, Date.now() + 60_000);
    gate.landed(first, 0);
    const second = gate.admit(0);
    await vi.advanceTimersByTimeAsync(600);
    gate.landed(await second, Date.now());
    const third = gate.admit(0);
    await vi.advanceTimersByTimeAsync(5_000);
    await third;
    expect(starts[1]! - starts[0]!).toBeGreaterThanOrEqual(500);
    // The window runs from the first landing (its start, at most now): a second after it, not a minute.
    expect(starts[2]! - starts[0]!).toBeGreaterThanOrEqual(1000);
    expect(starts[2]! - starts[0]!).toBeLessThan(1000 + LANDED_CAP_MS / 2);
  });
});
