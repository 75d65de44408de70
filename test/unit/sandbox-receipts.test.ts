import { afterEach, describe, expect, it, vi } from "vitest";
import type { MessageRow } from "../../src/messaging/messages/mapper.ts";
import type { NetworkHost, StatusOptions } from "../../src/messaging/networks/driver.ts";
import { SandboxDriver } from "../../src/messaging/networks/sandbox.ts";

const T0 = 1_800_000_000_000;
type Call = { ids: string[]; target: string; at: number; deliveredAt?: number };

/** A session's side of the port with only what the sandbox's receipts use; it records each change. */
function host(calls: Call[]): NetworkHost {
  const partial: Partial<NetworkHost> = {
    config: () => ({ sandbox: { deliveredMs: 200, readMs: 1_000, templateApprovalMs: 2_000 } }) as ReturnType<NetworkHost["config"]>,
    wakeAt: async () => {},
    statusChanged: async (selector, target, at, _error, opts?: StatusOptions) => {
      calls.push({ ids: "ids" in selector ? selector.ids : selector.externalIds, target, at, deliveredAt: opts?.deliveredAt });
      return [];
    },
  };
  return partial as NetworkHost;
}
const row = (id: string): MessageRow => ({ id, chatId: "14155550123@c.us", status: "sent", media: null, content: null, text: "hi" }) as MessageRow;

describe("sandbox receipts", () => {
  afterEach(() => void vi.useRealTimers());

  it("on time: delivered, then read, each its own change", async () => {
    vi.useFakeTimers({ now: T0 });
    const calls: Call[] = [];
    const driver = new SandboxDriver("14155550100", host(calls));
    await driver.afterSent([row("m1"), row("m2")], T0);
    await vi.advanceTimersByTimeAsync(300);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(calls.map((c) => [c.ids, c.target])).toEqual([[["m1", "m2"], "delivered"], [["m1", "m2"], "read"]]);
    expect(calls[1]!.at).toBeGreaterThan(calls[0]!.at);
  });

  it("late (both due at one tick): one change to read per message, delivered stamped a millisecond before read", async () => {
    vi.useFakeTimers({ now: T0 });
    const calls: Call[] = [];
    const driver = new SandboxDriver("14155550100", host(calls));
    await driver.afterSent([row("m1"), row("m2")], T0);
    // The isolate was busy: the first tick runs after both receipts were due.
    vi.setSystemTime(T0 + 5_000);
    await vi.advanceTimersByTimeAsync(0);
    await vi.advanceTimersByTimeAsync(300);
    expect(calls).toEqual([{ ids: ["m1", "m2"], target: "read", at: expect.any(Number), deliveredAt: expect.any(Number) }]);
    expect(calls[0]!.deliveredAt).toBeGreaterThanOrEqual(T0 + 5_000);
    expect(calls[0]!.at).toBe(calls[0]!.deliveredAt! + 1);
  });
});
