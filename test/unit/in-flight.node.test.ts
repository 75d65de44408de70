import { describe, expect, it } from "vitest";
import { InFlight } from "../../src/platform/in-flight.ts";

const tick = () => new Promise((r) => setTimeout(r, 0));

describe("InFlight: at most N at once, waiters served in order", () => {
  it("admits N at once, holds the next until a place is released, and hands it to the longest waiter", async () => {
    const slots = new InFlight(2);
    const a = await slots.acquire();
    const b = await slots.acquire();
    expect(slots.size).toBe(2);
    const order: string[] = [];
    const c = slots.acquire().then((r) => (order.push("c"), r));
    const d = slots.acquire().then((r) => (order.push("d"), r));
    await tick();
    expect(order).toEqual([]);
    a();
    await tick();
    expect(order).toEqual(["c"]);
    expect(slots.size).toBe(2);
    // Releasing twice frees one place only.
    a();
    await tick();
    expect(order).toEqual(["c"]);
    b();
    await tick();
    expect(order).toEqual(["c", "d"]);
    (await c)();
    (await d)();
    expect(slots.size).toBe(0);
  });

  it("many callers racing for places never hold more than N", async () => {
    const slots = new InFlight(3);
    let running = 0;
    let most = 0;
    await Promise.all(
      Array.from({ length: 50 }, async (_, i) => {
        const release = await slots.acquire();
        running++;
        most = Math.max(most, running);
        await new Promise((r) => setTimeout(r, i % 3));
        running--;
        release();
      }),
    );
    expect(most).toBe(3);
    expect(slots.size).toBe(0);
  });
  it("tryAcquire takes a free place at once, and none while all are taken or someone waits", async () => {
    const slots = new InFlight(1);
    const first = slots.tryAcquire();
    expect(first).not.toBeNull();
    expect(slots.tryAcquire()).toBeNull();
    const waiter = slots.acquire();
    first!();
    const second = await waiter;
    expect(slots.tryAcquire()).toBeNull();
    second();
    second();
    expect(slots.size).toBe(0);
    expect(new InFlight(0).tryAcquire()).toBeNull();
  });
});
