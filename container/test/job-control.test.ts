// Async jobs sent with X-Job-Id: DELETE /jobs/<id> stops one at once (its engine's process group
// killed, its compile slot free), GET /jobs/<id>/events follows it; both only for the namespace
// the job came with.
import { readdirSync, readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningServer } from "../src/server.ts";
import { doc, testServer } from "./helpers.ts";

const NS = "a".repeat(32);
const OTHER = "b".repeat(32);
const LOOP = doc("\\def\\x{\\x}\\x");
let s: RunningServer;
let jobRoot: string;
let n = 0;
const newId = () => `job_ctl${process.pid}x${++n}`;

beforeAll(async () => {
  jobRoot = path.join(os.tmpdir(), `texcompile-jobctl-${process.pid}-${Date.now()}`);
  s = await testServer({ engines: ["pdflatex"], poolSize: { pdflatex: 1 } as never, maxConcurrent: 1, jobRoot });
});
afterAll(() => s?.close());

function submit(id: string, source: string, namespace = NS, timeoutMs = 20_000) {
  return fetch(`${s.url}/compile`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-job-id": id },
    body: JSON.stringify({ engine: "pdflatex", source, namespace, timeoutMs }),
  }).then(async (r) => ({ status: r.status, type: r.headers.get("content-type") ?? "", body: Buffer.from(await r.arrayBuffer()) }));
}

const cancel = (id: string, namespace = NS) => fetch(`${s.url}/jobs/${id}?namespace=${namespace}`, { method: "DELETE" });
const errorCode = (r: { body: Buffer }) => JSON.parse(r.body.toString()).error.code as string;

type Sse = { id?: string; event: string; data: any };

/** Every event of an SSE answer, until the server ends it. */
async function readAll(res: Response): Promise<Sse[]> {
  const text = await res.text();
  return text
    .split("\n\n")
    .filter((b) => b.trim() && !b.startsWith(":"))
    .map((b) => {
      const f: Record<string, string> = {};
      for (const line of b.split("\n")) {
        const i = line.indexOf(": ");
        f[line.slice(0, i)] = line.slice(i + 2);
      }
      return { ...(f.id ? { id: f.id } : {}), event: f.event!, data: JSON.parse(f.data!) };
    });
}

async function until(cond: () => boolean | Promise<boolean>, ms = 10_000): Promise<void> {
  for (const end = Date.now() + ms; !(await cond()); ) {
    if (Date.now() > end) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** CPU ticks of the server's engine processes: those whose command line names the job root (every sandbox's does) and their descendants. */
function cpuByPid(): Map<number, number> {
  const all = new Map<number, { ppid: number; ticks: number; ours: boolean }>();
  for (const p of readdirSync("/proc")) {
    if (!/^\d+$/.test(p)) continue;
    try {
      const stat = readFileSync(`/proc/${p}/stat`, "latin1");
      const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      all.set(Number(p), { ppid: Number(f[1]), ticks: Number(f[11]) + Number(f[12]), ours: readFileSync(`/proc/${p}/cmdline`, "latin1").includes(jobRoot) });
    } catch {
      /* gone */
    }
  }
  const ours = (pid: number): boolean => {
    for (let p = pid, i = 0; p > 1 && i < 64; p = all.get(p)?.ppid ?? 0, i++) if (all.get(p)?.ours) return true;
    return false;
  };
  return new Map([...all].filter(([pid]) => ours(pid)).map(([pid, v]) => [pid, v.ticks]));
}

/** Engine processes of the server alive now. */
const engines = () => [...cpuByPid().keys()].filter((p) => readFileSync(`/proc/${p}/cmdline`, "latin1").startsWith("pdflatex")).length;

describe("cancel", () => {
  it("stops a running job at once: engine group killed, slot free within 1 s, the compile answers 409 job_cancelled", async () => {
    const id = newId();
    const job = submit(id, LOOP);
    await until(() => s.gate.stats().active === 1);
    await new Promise((r) => setTimeout(r, 300)); // the engine is well into its loop
    // the job's engine: the process that used the most CPU meanwhile
    const a = cpuByPid();
    await new Promise((r) => setTimeout(r, 400));
    const [loop] = [...cpuByPid()].map(([pid, t]) => [pid, t - (a.get(pid) ?? t)] as const).sort((x, y) => y[1] - x[1])[0] ?? [];
    expect(loop).toBeDefined();

    const t = Date.now();
    const res = await cancel(id);
    const took = Date.now() - t;
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ status: "cancelled", stopped: true });
    expect(took).toBeLessThan(1000);
    expect(s.gate.stats().active).toBe(0);
    const answer = await job;
    expect(answer.status).toBe(409);
    expect(errorCode(answer)).toBe("job_cancelled");
    // the looping engine is gone within the second; once the pool has settled (a refill may still be
    // loading its format on a busy machine), the only engines left are the pool's idle ones
    await until(() => !cpuByPid().has(loop!), 1000);
    const pool = () => s.pools.stats().pdflatex!;
    await until(() => pool().starting === 0 && engines() === pool().ready, 30_000);
    expect(pool().ready).toBeLessThanOrEqual(1);
    // the slot serves the next job
    const next = await submit(newId(), doc("after"));
    expect(next.status).toBe(200);
  });

  it("a job still waiting for a slot leaves the queue and never runs", async () => {
    const hold = await s.gate.acquire("other");
    try {
      const id = newId();
      const job = submit(id, doc("never"));
      await until(() => s.gate.stats().queued === 1);
      const res = await cancel(id);
      expect(res.status).toBe(200);
      const answer = await job;
      expect(answer.status).toBe(409);
      expect(errorCode(answer)).toBe("job_cancelled");
      expect(s.gate.stats()).toMatchObject({ queued: 0, active: 1 });
    } finally {
      hold();
    }
  });

  it("a cancel that arrives before its job refuses the job on arrival", async () => {
    const id = newId();
    expect((await cancel(id)).status).toBe(404);
    const answer = await submit(id, doc("late"));
    expect(answer.status).toBe(409);
    expect(errorCode(answer)).toBe("job_cancelled");
  });

  it("a finished job is 409 job_finished", async () => {
    const id = newId();
    expect((await submit(id, doc("done"))).status).toBe(200);
    const res = await cancel(id);
    expect(res.status).toBe(409);
    expect(((await res.json()) as any).error.code).toBe("job_finished");
  });
});

describe("security: a job is reached only with its own id and namespace", () => {
  it("another namespace, another id or a path trick cannot stop or follow the job", async () => {
    const id = newId();
    const job = submit(id, doc("\\count255=0 \\loop\\advance\\count255 by 1 \\ifnum\\count255<3000000 \\repeat kept"));
    await until(() => s.gate.stats().active === 1);
    for (const url of [`/jobs/${id}?namespace=${OTHER}`, `/jobs/${id}`, `/jobs/${id}x?namespace=${NS}`, `/jobs/${encodeURIComponent(`${newId()}/../${id}`)}?namespace=${NS}`, `/jobs/${id}%00?namespace=${NS}`]) {
      const res = await fetch(`${s.url}${url}`, { method: "DELETE" });
      expect(res.status, url).toBe(404);
      const [p, q = ""] = url.split("?");
      const ev = await fetch(`${s.url}${p}/events${q ? `?${q}` : ""}`);
      expect(ev.status, url).toBe(404);
      await ev.body?.cancel();
    }
    const answer = await job;
    expect(answer.status).toBe(200);
    expect(answer.type).toBe("application/pdf");
  });

  it("a malformed X-Job-Id is a 400 and nothing runs", async () => {
    const answer = await submit("../etc", doc("x"));
    expect(answer.status).toBe(400);
  });

  it("two compiles with the same id at once: the second is refused", async () => {
    const id = newId();
    const first = submit(id, LOOP);
    await until(() => s.gate.stats().active === 1);
    const second = await submit(id, doc("dup"));
    expect(second.status).toBe(409);
    expect(errorCode(second)).toBe("job_running");
    await cancel(id);
    expect((await first).status).toBe(409);
  });
});

describe("events", () => {
  it("follows a job's passes, log lines and result; a reconnect with Last-Event-ID gets only what came after", async () => {
    const id = newId();
    const job = submit(id, doc("\\tableofcontents\\section{One}\\section{Two}\\typeout{progress-marker}"));
    let res: Response | undefined;
    await until(async () => {
      res = await fetch(`${s.url}/jobs/${id}/events?namespace=${NS}`);
      if (res.status === 200) return true;
      await res.body?.cancel();
      return false;
    });
    expect(res!.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const events = await readAll(res!);
    expect((await job).status).toBe(200);
    const types = events.map((e) => e.event);
    expect(types).toContain("pass");
    expect(events.filter((e) => e.event === "pass").map((e) => e.data.pass)).toEqual([1, 2]);
    expect(events.some((e) => e.event === "log" && e.data.line.includes("progress-marker"))).toBe(true);
    const last = events.at(-1)!;
    expect(last).toMatchObject({ event: "result", data: { ok: true, pages: 1, passes: 2 } });
    // ids go up one by one
    const ids = events.map((e) => Number(e.id));
    expect(ids).toEqual(ids.map((_, i) => ids[0]! + i));

    const mid = ids[Math.floor(ids.length / 2)]!;
    const again = await readAll(await fetch(`${s.url}/jobs/${id}/events?namespace=${NS}`, { headers: { "last-event-id": String(mid) } }));
    expect(again.map((e) => Number(e.id))).toEqual(ids.filter((i) => i > mid));
  });

  it("names the tools that run between passes (makeindex)", async () => {
    const id = newId();
    const job = submit(id, doc("apple\\index{apple}\n\\printindex", "\\usepackage{makeidx}\n\\makeindex\n"));
    let res: Response | undefined;
    await until(async () => {
      res = await fetch(`${s.url}/jobs/${id}/events?namespace=${NS}`);
      if (res.status === 200) return true;
      await res.body?.cancel();
      return false;
    });
    const events = await readAll(res!);
    expect((await job).status).toBe(200);
    const order = events.filter((e) => e.event === "pass" || e.event === "tool").map((e) => (e.event === "tool" ? e.data.tool : `pass ${e.data.pass}`));
    expect(order.slice(0, 3)).toEqual(["pass 1", "makeindex", "pass 2"]);
  });

  it("a cancelled job's stream ends with a cancelled event", async () => {
    const id = newId();
    const job = submit(id, LOOP);
    await until(() => s.gate.stats().active === 1);
    const res = await fetch(`${s.url}/jobs/${id}/events?namespace=${NS}`);
    expect(res.status).toBe(200);
    const reading = readAll(res);
    await cancel(id);
    const events = await reading;
    expect(events.at(-1)!.event).toBe("cancelled");
    await job;
  });
});
