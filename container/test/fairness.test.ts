// Fairness between namespaces on one compile server: who counts as heavy, that a heavy
// namespace's processes really run at the lowest CPU priority, that a short job of another
// namespace stops long ones while it runs, and that heavy jobs leave the warm engines to others.
import { spawn } from "node:child_process";
import { promises as fs } from "node:fs";
import os from "node:os";
import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import { reniceTree, Fairness, LOW_PRIORITY, PAUSE_MAX_MS, PREEMPT_AFTER_MS } from "../src/fairness.ts";
import { Busy, Gate } from "../src/limits.ts";
import type { RunningServer } from "../src/server.ts";
import { compile, doc, expectPdf, testServer } from "./helpers.ts";

describe("who is heavy", () => {
  afterEach(() => vi.useRealTimers());
  const at = (ms: number) => vi.setSystemTime(new Date(1_000_000 + ms));
  /** A Fairness on a fake clock at 0. */
  const fresh = () => {
    vi.useFakeTimers();
    at(0);
    return new Fairness();
  };

  it("a namespace alone is never heavy, however long it keeps the server busy", () => {
    const f = fresh();
    const job = f.begin("a");
    at(30_000);
    expect(job.heavy()).toBe(false);
    job.end();
  });

  it("busy without a break for over a second, while another namespace compiles now and then: heavy; the other is not", () => {
    const f = fresh();
    const b = f.begin("b");
    at(100);
    b.end();
    // back to back: gaps of 5 ms do not break the streak
    let t = 0;
    for (let i = 0; i < 4; i++) {
      at((t += 5));
      const a = f.begin("a");
      at((t += 300));
      a.end();
    }
    at((t += 5));
    const a = f.begin("a");
    expect(a.heavy()).toBe(true);
    expect(f.isHeavy("b")).toBe(false);
    expect(f.stats()).toMatchObject({ activeNamespaces: 2, heavyNamespaces: 1 });
    a.end();
    // a pause longer than the gap ends the streak
    at(t + 1_000);
    expect(f.begin("a").heavy()).toBe(false);
  });

  it("pauses between requests longer than the gap do not hide a namespace busy most of the time", () => {
    const f = fresh();
    let t = 0;
    let heavyAt: number | undefined;
    for (let i = 0; i < 12; i++) {
      f.begin("b").end(); // b compiles now and then
      const a = f.begin("a");
      at((t += 900));
      if (heavyAt === undefined && a.heavy()) heavyAt = t;
      a.end();
      at((t += 300)); // 300 ms pauses: each breaks the streak; a is busy 75 % of the time
    }
    expect(heavyAt).toBeDefined();
    expect(heavyAt!).toBeLessThan(8_000);
  });

  it("three jobs begun within 800 ms: heavy at once (short jobs drain the pool before a streak shows)", () => {
    const f = fresh();
    f.begin("b").end();
    let last;
    for (let i = 0; i < 3; i++) {
      at(1_000 + i * 100);
      last = f.begin("a");
      last.end();
    }
    expect(f.isHeavy("a")).toBe(true);
    // a person compiling twice a second is not
    const g = new Fairness();
    at(5_000);
    g.begin("a").end();
    for (let i = 0; i < 3; i++) {
      at(6_000 + i * 500);
      g.begin("b").end();
    }
    expect(g.isHeavy("b")).toBe(false);
  });

  it("when every active namespace is heavy, none is demoted; an idle one is forgotten after 10 s", () => {
    const f = fresh();
    const a = f.begin("a");
    const b = f.begin("b");
    at(2_000);
    expect(a.heavy()).toBe(false);
    expect(b.heavy()).toBe(false);
    b.end();
    at(2_500); // b's streak is over, a's goes on: a yields to b
    expect(a.heavy()).toBe(true);
    at(12_600); // b idle for 10 s: forgotten, a is alone again
    expect(a.heavy()).toBe(false);
    expect(f.stats().activeNamespaces).toBe(1);
    a.end();
  });
});

describe("what the pools wait for", () => {
  afterEach(() => vi.useRealTimers());
  const at = (ms: number) => vi.setSystemTime(new Date(1_000_000 + ms));

  it("a heavy namespace's jobs do not keep the pools from refilling; a light job does, for a grace after it", () => {
    vi.useFakeTimers();
    at(0);
    const f = new Fairness();
    f.begin("b").end();
    const a = f.begin("a");
    expect(f.lightBusy(30)).toBe(true); // a alone is not heavy yet
    at(1_500);
    expect(a.heavy()).toBe(true);
    expect(f.lightBusy(30)).toBe(false);
    const b = f.begin("b");
    expect(f.lightBusy(30)).toBe(true);
    b.end();
    at(1_520);
    expect(f.lightBusy(30)).toBe(true); // its answer may still be on its way out
    at(1_560);
    expect(f.lightBusy(30)).toBe(false);
    a.end();
  });

  it("a light job that has just begun is short for PREEMPT_AFTER_MS", () => {
    vi.useFakeTimers();
    at(0);
    const f = new Fairness();
    const b = f.begin("b");
    expect(f.shortJobRunning()).toBe(true);
    at(PREEMPT_AFTER_MS + 1);
    expect(f.shortJobRunning()).toBe(false);
    b.end();
    expect(f.shortJobRunning()).toBe(false);
  });
});

describe("who gets a compile slot", () => {
  const settled = async <T>(p: Promise<T>) => {
    let done = false;
    void p.then(() => (done = true), () => (done = true));
    await new Promise((r) => setTimeout(r, 10));
    return done;
  };

  it("an account holding no slot gets one over the limit while another holds them all; only one such extra", async () => {
    const g = new Gate(2, 4, 1_000);
    const a1 = await g.acquire("a");
    await g.acquire("a");
    const b = g.acquire("b");
    expect(await settled(b)).toBe(true);
    expect(g.stats().active).toBe(3);
    const c = g.acquire("c");
    expect(await settled(c)).toBe(false); // the extra slot is taken
    const a3 = g.acquire("a");
    a3.catch(() => {}); // still waiting when the test ends
    (await b)();
    expect(await settled(c)).toBe(true); // the extra freed: c (holding none) before a
    expect(await settled(a3)).toBe(false);
    a1();
    expect(await settled(a3)).toBe(false); // c took the extra, so a1's slot only brings it back to two
  });

  it("a freed slot goes to the waiting account that holds the fewest, not to the first in line", async () => {
    const g = new Gate(1, 8, 10_000);
    const first = await g.acquire("a");
    const order: string[] = [];
    const queued = ["a", "a", "a"].map((ns, i) => g.acquire(ns).then((rel) => (order.push(`${ns}${i}`), rel)));
    const b = g.acquire("b").then((rel) => (order.push("b"), rel)); // max 1: no extra slot
    await new Promise((r) => setTimeout(r, 10));
    first();
    (await b)();
    for (const q of queued) (await q)();
    expect(order[0]).toBe("b");
    expect(order.slice(1)).toEqual(["a0", "a1", "a2"]);
  });

  it("a full queue still answers Busy", async () => {
    const g = new Gate(1, 1, 1_000);
    await g.acquire("a");
    g.acquire("a").catch(() => {}); // waits until the gate's own timeout
    await expect(g.acquire("a")).rejects.toBeInstanceOf(Busy);
  });
});

describe("demotion", () => {
  const niceOf = async (pid: number) => Number((await fs.readFile(`/proc/${pid}/stat`, "utf8")).split(") ")[1]!.split(" ")[16]);

  it("reniceTree sets nice 19 on a process and everything below it, children forked later included", async () => {
    const child = spawn("/bin/sh", ["-c", "sleep 30 & sleep 30 & sleep 0.3; sleep 30 & wait"], { detached: true, stdio: "ignore" });
    try {
      await new Promise((r) => setTimeout(r, 100));
      const n = await reniceTree(child.pid!);
      expect(n).toBeGreaterThanOrEqual(3); // sh and two sleeps
      await new Promise((r) => setTimeout(r, 400)); // the third sleep is forked after the demotion
      const kids = (await fs.readFile(`/proc/${child.pid}/task/${child.pid}/children`, "utf8")).trim().split(" ").map(Number);
      expect(kids.length).toBe(3);
      expect(os.getPriority(child.pid!)).toBe(LOW_PRIORITY);
      for (const k of kids) expect(await niceOf(k)).toBe(LOW_PRIORITY);
    } finally {
      process.kill(-child.pid!, "SIGKILL");
    }
  });
});

describe("pausing", () => {
  /** A stand-in for a sandbox: a process group, and below it a session of its own (as bwrap makes). */
  const sandbox = async () => {
    const child = spawn("/bin/sh", ["-c", "setsid sleep 30 & wait"], { detached: true, stdio: "ignore" });
    let inner = 0;
    for (let i = 0; i < 50 && !inner; i++) {
      await new Promise((r) => setTimeout(r, 10));
      inner = Number((await fs.readFile(`/proc/${child.pid}/task/${child.pid}/children`, "utf8").catch(() => "")).trim().split(" ")[0]) || 0;
    }
    expect(inner).toBeGreaterThan(0);
    return { child, pids: [child.pid!, inner] };
  };
  /** "T" for every process of the sandbox when it is stopped, "S" when it sleeps as it should. */
  const states = async (pids: number[]) => (await Promise.all(pids.map(async (p) => (await fs.readFile(`/proc/${p}/stat`, "utf8")).split(") ")[1]![0]))).join("");
  /** A signal takes effect once delivered: the states are polled for a moment. */
  const expectStates = (pids: number[], want: string) => expect.poll(() => states(pids), { interval: 5, timeout: 1_000 }).toBe(want);
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
  /** Nothing may have been stopped: a moment for a stray signal to land, then the states. */
  const expectRunning = async (pids: number[]) => {
    await sleep(30);
    expect(await states(pids)).toBe("SS".repeat(pids.length / 2));
  };
  const made: Array<{ child: ReturnType<typeof spawn>; pids: number[] }> = [];
  /** A job of `ns` with one sandbox process, watched as runToExit watches a pass; `add` starts another. */
  const jobWithProcess = async (f: Fairness, ns: string) => {
    const job = f.begin(ns);
    const stops: Array<() => void> = [];
    const add = async () => {
      const sb = await sandbox();
      made.push(sb);
      stops.push(job.watch(sb.child));
      return sb.pids;
    };
    const pids = await add();
    return { pids, add, end: () => (stops.forEach((s) => s()), job.end()) };
  };

  it("a light job stops another namespace's job that has run over PREEMPT_AFTER_MS, sandbox and session, until it ends", async () => {
    const f = new Fairness({ cores: 1 }); // more want to run than there are CPUs
    const a = await jobWithProcess(f, "a");
    const young = f.begin("b"); // a has run less than PREEMPT_AFTER_MS: left alone
    await expectRunning(a.pids);
    young.end();
    await sleep(PREEMPT_AFTER_MS + 50);
    const own = f.begin("a"); // a's own next job does not stop a
    await expectRunning(a.pids);
    own.end();
    const b = f.begin("b");
    await expectStates(a.pids, "TT");
    const later = await a.add(); // a process a starts while it is stopped is stopped too
    await expectStates(later, "TT");
    b.end();
    await expectStates([...a.pids, ...later], "SSSS");
    expect(f.stats().pauses).toBe(1);
    a.end();
  });

  it("a light job that runs long lets the others go after PAUSE_MAX_MS; a heavy namespace's job stops nobody", async () => {
    const f = new Fairness({ cores: 1 });
    const a = await jobWithProcess(f, "a");
    await sleep(PREEMPT_AFTER_MS + 50);
    const b = f.begin("b");
    await expectStates(a.pids, "TT");
    await sleep(PAUSE_MAX_MS + 100);
    await expectStates(a.pids, "SS");
    b.end();
    a.end();
    // a heavy namespace's job (three begun within 800 ms) stops nobody
    const g = new Fairness({ cores: 1 });
    g.begin("c").end();
    for (let i = 0; i < 3; i++) g.begin("h").end();
    const c = await jobWithProcess(g, "c");
    await sleep(PREEMPT_AFTER_MS + 50);
    expect(g.isHeavy("h")).toBe(true);
    const h = g.begin("h");
    await expectRunning(c.pids);
    h.end();
    const d = g.begin("d"); // while a light one does
    await expectStates(c.pids, "TT");
    d.end();
    await expectStates(c.pids, "SS");
    c.end();
  });

  it("a job is paused for the pause budget in all at most: newcomers cannot starve it", async () => {
    const f = new Fairness({ pauseBudgetMs: 100, cores: 1 });
    const a = await jobWithProcess(f, "a");
    await sleep(PREEMPT_AFTER_MS + 50);
    const b = f.begin("b");
    await expectStates(a.pids, "TT");
    await sleep(150);
    b.end();
    await expectStates(a.pids, "SS");
    const c = f.begin("c"); // a has been stopped for its budget
    await expectRunning(a.pids);
    c.end();
    a.end();
  });

  it("light jobs that overlap hold a job stopped for its pause budget in all, not for as long as they keep coming", async () => {
    const budget = 300;
    const f = new Fairness({ pauseBudgetMs: budget, cores: 1 });
    const a = await jobWithProcess(f, "a");
    await sleep(PREEMPT_AFTER_MS + 50);
    // how long a's sandbox is seen stopped, sampled every few milliseconds
    let stoppedMs = 0;
    let sampling = true;
    const sampler = (async () => {
      for (let last = Date.now(); sampling; ) {
        const st = await states(a.pids);
        const now = Date.now();
        if (st.includes("T")) stoppedMs += now - last;
        last = now;
        await sleep(5);
      }
    })();
    // a light job of another account (with its engine running) every 150 ms, each ending 100 ms
    // after the next began (each holds a for less than PAUSE_MAX_MS): 1.5 s without a gap
    let prev = await jobWithProcess(f, "l0");
    await expectStates(a.pids, "TT");
    for (let k = 1; k <= 10; k++) {
      await sleep(150);
      const next = await jobWithProcess(f, `l${k}`);
      await sleep(100);
      prev.end();
      prev = next;
    }
    prev.end();
    sampling = false;
    await sampler;
    expect(stoppedMs).toBeGreaterThan(budget / 2);
    expect(stoppedMs).toBeLessThan(budget + 200); // the last sample's interval and a signal's delivery
    await expectStates(a.pids, "SS");
    a.end();
  });

  it("with a CPU to spare, a long job is left to run; a heavy namespace's is stopped all the same", async () => {
    const f = new Fairness({ cores: 2 }); // a's process and b's: no more than the CPUs
    const a = await jobWithProcess(f, "a");
    await sleep(PREEMPT_AFTER_MS + 50);
    const b = f.begin("b");
    await expectRunning(a.pids);
    b.end();
    a.end();
    const g = new Fairness({ cores: 2 });
    g.begin("c").end();
    for (let i = 0; i < 3; i++) g.begin("h").end(); // h is heavy
    const h = await jobWithProcess(g, "h");
    const c = g.begin("c");
    await expectStates(h.pids, "TT");
    c.end();
    await expectStates(h.pids, "SS");
    h.end();
  });

  it("an engine a pool starts for later is stopped while a light job runs (when the CPUs are crowded), and goes on once released", async () => {
    const f = new Fairness({ cores: 1 });
    const spare = await sandbox();
    made.push(spare);
    const ready = f.spare(spare.child);
    const b = f.begin("b");
    await expectStates(spare.pids, "TT");
    ready(); // ready before the light job ended: it must be running when a job takes it
    await expectStates(spare.pids, "SS");
    b.end();
    await expectStates(spare.pids, "SS");
  });
});

describe("on the server", () => {
  const servers: RunningServer[] = [];
  afterAll(() => Promise.all(servers.map((s) => s.close())));
  const health = async (url: string) => (await fetch(`${url}/healthz`)).json() as Promise<{ fairness: { heavyNamespaces: number; demoted: number; pauses: number }; pools: { pdflatex: { ready: number; cold: number; served: number } } }>;

  // a document that keeps pdflatex busy for a few seconds, then succeeds
  const spin = doc("\\count255=0 \\loop\\advance\\count255 by 1 \\ifnum\\count255<8000000 \\repeat done");

  it("a long job beside another account's compiles is demoted to nice 19; the other account's compile still succeeds", async () => {
    const s = await testServer({ engines: ["pdflatex"], poolSize: { pdflatex: 4 } as never, maxConcurrent: 2 });
    servers.push(s);
    expectPdf(await compile(s.url, { engine: "pdflatex", source: doc("B"), namespace: "b" }));
    const long = compile(s.url, { engine: "pdflatex", source: spin, namespace: "a", timeoutMs: 30_000 });
    let demotedEngine = false;
    for (let i = 0; i < 60 && !demotedEngine; i++) {
      await new Promise((r) => setTimeout(r, 100));
      // the busy pdflatex of a's job: the one process of the pool that uses the CPU
      for (const pid of await fs.readdir("/proc").catch(() => [] as string[])) {
        if (!/^\d+$/.test(pid)) continue;
        const stat = await fs.readFile(`/proc/${pid}/stat`, "utf8").catch(() => "");
        if (!stat.includes("(pdflatex)")) continue;
        const f = stat.split(") ")[1]!.split(" ");
        if (Number(f[11]) > 50 && Number(f[16]) === LOW_PRIORITY) demotedEngine = true; // utime > 0.5 s of ticks, nice 19
      }
      if (i % 5 === 0) expectPdf(await compile(s.url, { engine: "pdflatex", source: doc(`B ${i}`), namespace: "b" }));
    }
    expect(demotedEngine).toBe(true);
    // a is heavy now (its engine was demoted) and still running: b's next compile pauses it
    expectPdf(await compile(s.url, { engine: "pdflatex", source: doc("B paused a"), namespace: "b" }));
    const fair = (await health(s.url)).fairness;
    expect(fair.demoted).toBeGreaterThan(0);
    expect(fair.pauses).toBeGreaterThan(0); // b's compiles stopped a's long job while they ran
    expectPdf(await long);
  }, 90_000);

  it("a namespace sending jobs back to back starts its own engines, leaving the warm ones to the other account", async () => {
    const s = await testServer({ engines: ["pdflatex"], poolSize: { pdflatex: 4 } as never, maxConcurrent: 2 });
    servers.push(s);
    expectPdf(await compile(s.url, { engine: "pdflatex", source: doc("B"), namespace: "b" }));
    for (let i = 0; i < 30 && (await health(s.url)).pools.pdflatex.ready < 4; i++) await new Promise((r) => setTimeout(r, 100));
    // quick failures in a row: heavy from the third (three begun within 800 ms); each job begun
    // while a is heavy starts its own engine
    const before = (await health(s.url)).pools.pdflatex;
    let heavyTakes = 0;
    for (let i = 0; i < 8; i++) {
      const h0 = await health(s.url);
      expect((await compile(s.url, { engine: "pdflatex", source: "\\undefinedcommand", namespace: "a" })).status).toBe(422);
      const h1 = await health(s.url);
      if (h0.fairness.heavyNamespaces === 1 && h1.fairness.heavyNamespaces === 1) {
        heavyTakes++;
        expect(h1.pools.pdflatex.cold - h0.pools.pdflatex.cold).toBe(1);
      }
    }
    expect(heavyTakes).toBeGreaterThanOrEqual(2);
    const after = (await health(s.url)).pools.pdflatex;
    expect(after.served - before.served).toBe(8);
    const r = await compile(s.url, { engine: "pdflatex", source: doc("B again"), namespace: "b" });
    expectPdf(r);
    expect((await health(s.url)).pools.pdflatex.cold - after.cold).toBe(0); // b found a warm engine
  }, 90_000);
});
