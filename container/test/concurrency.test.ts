// 20 concurrent compiles: all succeed (queue) or get 503 + Retry-After beyond
// the configured concurrency and queue; no cross-talk between jobs. One account cannot fill
// the queue: its excess is refused while other accounts still queue, and are served in turn.
import { afterAll, describe, expect, it } from "vitest";
import { loadConfig } from "../src/config.ts";
import { Busy, Gate } from "../src/limits.ts";
import type { RunningServer } from "../src/server.ts";
import { compile, doc, expectPdf, pdfText, testServer } from "./helpers.ts";

const servers: RunningServer[] = [];
afterAll(() => Promise.all(servers.map((s) => s.close())));

const job = (i: number) => ({
  engine: (["pdflatex", "xelatex", "lualatex"] as const)[i % 3],
  source: doc(`Job number JOB${i}X.\\input{own}`),
  files: [{ path: "own.tex", content: `Own file of FILE${i}Y.` }],
});

describe("concurrency", () => {
  it("20 concurrent compiles all succeed with a queue, each with its own content", async () => {
    const s = await testServer({ maxConcurrent: 2, maxQueue: 40, maxQueuePerAccount: 40, queueTimeoutMs: 120_000 });
    servers.push(s);
    const rs = await Promise.all(Array.from({ length: 20 }, (_, i) => compile(s.url, job(i))));
    rs.forEach((r, i) => {
      expectPdf(r);
      const text = pdfText(r.body).replace(/\s+/g, " ");
      expect(text).toContain(`Job number JOB${i}X.`);
      expect(text).toContain(`Own file of FILE${i}Y.`);
      for (let j = 0; j < 20; j++) if (j !== i) expect(text).not.toContain(`JOB${j}X`);
    });
  }, 180_000);

  it("beyond concurrency + queue: 503 compiler_busy with Retry-After, then serves again", async () => {
    const s = await testServer({ maxConcurrent: 1, maxQueue: 1, poolSize: { pdflatex: 2 } as never });
    servers.push(s);
    const rs = await Promise.all(Array.from({ length: 20 }, (_, i) => compile(s.url, { ...job(i), engine: "pdflatex" })));
    const ok = rs.filter((r) => r.status === 200);
    const busy = rs.filter((r) => r.status === 503);
    expect(ok.length + busy.length).toBe(20);
    expect(ok.length).toBeGreaterThanOrEqual(2);
    expect(busy.length).toBeGreaterThan(0);
    for (const r of busy) {
      expect(r.json.error.code).toBe("compiler_busy");
      expect(Number(r.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    }
    expectPdf(await compile(s.url, job(0)));
  }, 120_000);

  it("one account cannot fill the queue: its excess gets 503 with Retry-After, another account still queues and is served before the first one's waiters", async () => {
    // one slot, a queue of four, two of them per account
    const s = await testServer({ engines: ["pdflatex"], maxConcurrent: 1, maxQueue: 4, maxQueuePerAccount: 2, queueTimeoutMs: 120_000, poolSize: { pdflatex: 3 } as never });
    servers.push(s);
    const spin = (i: number) => doc(`\\count255=0 \\loop\\advance\\count255 by 1 \\ifnum\\count255<3000000 \\repeat A${i}`);
    const done: string[] = [];
    const send = (ns: string, source: string) => compile(s.url, { engine: "pdflatex", source, namespace: ns }).then((r) => (done.push(`${ns}:${r.status}`), r));
    const a = Array.from({ length: 6 }, (_, i) => send("a", spin(i)));
    // a holds the slot and has two waiting: the rest of a is refused at once
    await expect.poll(() => done.length, { interval: 10, timeout: 10_000 }).toBe(3);
    expect(done).toEqual(["a:503", "a:503", "a:503"]);
    expect(s.gate.stats()).toMatchObject({ active: 1, queued: 2 });
    // b's one job queues (the queue is not full) and runs next, before a's waiters
    const b = await send("b", doc("B"));
    expectPdf(b);
    const rs = await Promise.all(a);
    for (const r of rs.filter((r) => r.status === 503)) {
      expect(r.json.error.code).toBe("compiler_busy");
      expect(Number(r.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    }
    for (const r of rs.filter((r) => r.status !== 503)) expectPdf(r);
    expect(done.slice(3)).toEqual(["a:200", "b:200", "a:200", "a:200"]);
  }, 120_000);
});

describe("the gate between accounts", () => {
  const settled = async <T>(p: Promise<T>) => {
    let done = false;
    void p.then(() => (done = true), () => (done = true));
    await new Promise((r) => setTimeout(r, 10));
    return done;
  };

  it("an account with many waiters does not keep another's single waiter waiting: accounts take turns", async () => {
    const g = new Gate(1, 16, 10_000, 16);
    const first = await g.acquire("a");
    const order: string[] = [];
    // each job ends as soon as it has begun; `again`: the account sends its next one meanwhile
    const serve = (ns: string, again = 0): void => {
      void g.acquire(ns).then((rel) => {
        order.push(ns);
        if (again > 0) serve(ns, again - 1);
        setImmediate(rel);
      });
    };
    for (let i = 0; i < 6; i++) serve("a");
    serve("b", 1);
    serve("c");
    first();
    await expect.poll(() => order.length).toBe(9);
    expect(order).toEqual(["b", "c", "a", "b", "a", "a", "a", "a", "a"]);
  });

  it("the per-account cap counts waiters: one that is served or times out frees its place", async () => {
    const g = new Gate(1, 8, 10_000, 2);
    const held = await g.acquire("a");
    const w1 = g.acquire("a");
    const w2 = g.acquire("a");
    await expect(g.acquire("a")).rejects.toBeInstanceOf(Busy);
    const b = g.acquire("b"); // b still queues
    expect(await settled(b)).toBe(false);
    held();
    (await b)(); // b first: a was served last
    const w3 = g.acquire("a"); // w1 holds the slot now: a has one waiting, room for another
    (await w1)();
    (await w2)();
    (await w3)();
    expect(g.stats()).toMatchObject({ active: 0, queued: 0 });

    const t = new Gate(1, 8, 30, 1);
    const h = await t.acquire("a");
    const late = t.acquire("a");
    await expect(t.acquire("a")).rejects.toBeInstanceOf(Busy);
    await expect(late).rejects.toBeInstanceOf(Busy); // timed out
    const again = t.acquire("a"); // its place is free again
    expect(await settled(again)).toBe(false);
    h();
    (await again)();
  });

  it("tryAcquire (background work) takes a free slot only when nobody waits, and never the extra one", async () => {
    const g = new Gate(2, 4, 10_000, 4);
    const a1 = await g.acquire("a");
    const a2 = await g.acquire("a");
    expect(g.tryAcquire("bg")).toBeUndefined(); // the extra slot is for a request of another account
    const b = await g.acquire("b"); // another account's request gets the extra slot
    expect(g.stats().active).toBe(3);
    const a3 = g.acquire("a");
    b(); // the extra slot is free again, but neither a (which holds slots) nor background work may take it
    expect(g.tryAcquire("bg")).toBeUndefined();
    expect(await settled(a3)).toBe(false);
    a1();
    const r3 = await a3; // the freed slot goes to the waiter
    a2();
    const bg = g.tryAcquire("bg"); // a slot is free and nobody waits
    expect(bg).toBeDefined();
    expect(g.stats()).toMatchObject({ active: 2, queued: 0 });
    bg!();
    r3();
    expect(g.stats()).toMatchObject({ active: 0, queued: 0 });
  });

  it("MAX_QUEUE_PER_ACCOUNT defaults to a quarter of MAX_QUEUE, at least one", () => {
    expect(loadConfig({ MAX_QUEUE: "16" }).maxQueuePerAccount).toBe(4);
    expect(loadConfig({ MAX_QUEUE: "2" }).maxQueuePerAccount).toBe(1);
    expect(loadConfig({ MAX_QUEUE: "16", MAX_QUEUE_PER_ACCOUNT: "7" }).maxQueuePerAccount).toBe(7);
    expect(loadConfig({}, { maxQueue: 40 }).maxQueuePerAccount).toBe(10);
    expect(() => loadConfig({ MAX_QUEUE_PER_ACCOUNT: "0" })).toThrow(/MAX_QUEUE_PER_ACCOUNT/);
  });
});
