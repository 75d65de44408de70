// Fairness between accounts in an engine pool (real pdflatex processes, unsandboxed for speed):
// while another account is active, the account charged most (takes weighted by input size)
// leaves the last ready process to the others and waits for a start instead.
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../src/config.ts";
import { EnginePool, PoolClosed, removeDir, type WarmProcess } from "../src/pool.ts";

let jobRoot: string;
const taken: WarmProcess[] = [];
beforeAll(() => {
  jobRoot = mkdtempSync(path.join(os.tmpdir(), "pool-test-"));
});
afterAll(async () => {
  for (const p of taken) p.kill();
  await Promise.all(taken.map(async (p) => (await p.exited, await removeDir(p.dir))));
  rmSync(jobRoot, { recursive: true, force: true });
});

/** A pool of `size` pdflatex processes that, as while jobs run, refills only when dry or asked. */
async function fullPool(size: number): Promise<EnginePool> {
  const cfg = loadConfig({}, { jobRoot, sandbox: false, engines: ["pdflatex"], poolSize: { pdflatex: size, xelatex: 0, lualatex: 0 } });
  let busy = false;
  const pool = new EnginePool("pdflatex", cfg, () => busy);
  await pool.fill();
  expect(pool.stats().ready).toBe(size);
  busy = true;
  return pool;
}

async function take(pool: EnginePool, account: string, cost = 1): Promise<WarmProcess> {
  const p = await pool.take(account, cost);
  taken.push(p);
  return p;
}

describe("engine pool fairness", () => {
  it("one account alone is never heavy; of two active accounts the one charged more is", async () => {
    const pool = await fullPool(3);
    try {
      await take(pool, "a", 3);
      expect(pool.isHeavy("a")).toBe(false);
      await take(pool, "b", 1);
      expect(pool.isHeavy("a")).toBe(true);
      expect(pool.isHeavy("b")).toBe(false);
    } finally {
      await pool.close();
    }
  });

  it("the heavy account waits for a start; the last ready process goes to the other account", async () => {
    const pool = await fullPool(3);
    try {
      await take(pool, "attacker", 3);
      await take(pool, "bystander", 1);
      expect(pool.stats().ready).toBe(1);
      let served = false;
      const heavy = pool.take("attacker", 3).then((p) => {
        served = true;
        taken.push(p);
        return p;
      });
      await new Promise((r) => setTimeout(r, 0));
      expect(pool.stats()).toMatchObject({ ready: 1, cold: 1 }); // the reserve is untouched
      expect(served).toBe(false);
      const bystander = await take(pool, "bystander", 1);
      expect(bystander.isReady).toBe(true); // warm: no start to wait for
      const p = await heavy;
      expect(await p.ready).toBe(true);
    } finally {
      await pool.close();
    }
  }, 60_000);

  it("a job waiting for a start is told when the pool closes", async () => {
    const pool = await fullPool(2);
    await take(pool, "attacker", 3);
    await take(pool, "bystander", 1);
    // ready: 0; the attacker is heavy and waits
    const waiting = pool.take("attacker", 3);
    await pool.close();
    await expect(waiting).rejects.toBeInstanceOf(PoolClosed);
  }, 60_000);
});
