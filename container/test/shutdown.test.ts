// SIGTERM while busy: `node container/src/server.ts` kills its running jobs and is
// gone within 2 s, leaving no process behind and its port free for the next start;
// and `npm run dev`'s stop escalates to SIGKILL for a process group that ignores SIGTERM.
import { spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { freePort } from "../../scripts/free-port.ts";
import { stopGroups } from "../../scripts/process-groups.ts";
import { doc } from "./helpers.ts";

const SERVER = path.join(path.dirname(fileURLToPath(import.meta.url)), "../src/server.ts");

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.once("error", () => resolve(false));
    srv.listen(port, "127.0.0.1", () => srv.close(() => resolve(true)));
  });
}

/** Processes whose command line names `needle` (the job root appears in every engine's bwrap arguments). */
function processesNaming(needle: string): number[] {
  const out: number[] = [];
  for (const p of readdirSync("/proc")) {
    if (!/^\d+$/.test(p) || Number(p) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${p}/cmdline`, "latin1").includes(needle)) out.push(Number(p));
    } catch {
      /* gone */
    }
  }
  return out;
}

async function health(url: string): Promise<any> {
  const r = await fetch(`${url}/healthz`).catch(() => undefined);
  return r ? { status: r.status, ...(await r.json()) } : undefined;
}

describe("shutdown", () => {
  it("SIGTERM while a job runs: exit within 2 s, the job answered 503, no engine left, port free", async () => {
    const port = await freePort();
    const jobRoot = path.join(os.tmpdir(), `texcompile-shutdown-${process.pid}-${Date.now()}`);
    const child = spawn(process.execPath, [SERVER], {
      env: { ...process.env, PORT: String(port), HOST: "127.0.0.1", ENGINES: "pdflatex", POOL_SIZE: "2", JOB_ROOT: jobRoot },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (c: Buffer) => (output += c.toString()));
    child.stderr.on("data", (c: Buffer) => (output += c.toString()));
    const exited = new Promise<number>((resolve) => child.on("exit", () => resolve(Date.now())));
    const url = `http://127.0.0.1:${port}`;
    try {
      for (let i = 0; ; i++) {
        if ((await health(url))?.status === 200) break;
        if (i > 300 || child.exitCode !== null) throw new Error(`server did not become ready: ${output}`);
        await new Promise((r) => setTimeout(r, 100));
      }
      const job = fetch(`${url}/compile`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ engine: "pdflatex", source: doc("\\def\\x{\\x}\\x"), timeoutMs: 30_000 }),
      }).then(async (r) => ({ status: r.status, body: await r.json() }), (e: Error) => ({ status: 0, body: String(e) }));
      while ((await health(url))?.jobs?.active !== 1) await new Promise((r) => setTimeout(r, 50));
      await new Promise((r) => setTimeout(r, 300)); // the engine is well into its loop
      expect(processesNaming(jobRoot).length).toBeGreaterThan(0);

      const t = Date.now();
      child.kill("SIGTERM");
      const at = await exited;
      expect(at - t).toBeLessThan(2000);
      const answer = await job;
      expect(answer.status === 503 ? answer.body.error.code : answer.status).toBe("shutting_down");
      await new Promise((r) => setTimeout(r, 200)); // the sandboxes die with their parent
      expect(processesNaming(jobRoot)).toEqual([]);
      expect(await canListen(port)).toBe(true);
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    }
  });
});

describe("npm run dev's stop (scripts/process-groups.ts)", () => {
  it("SIGTERM, then SIGKILL after the grace period for a group that ignores SIGTERM, grandchildren included", async () => {
    const marker = `stubborn-${process.pid}-${Date.now()}`;
    const ignoreTerm = `process.on("SIGTERM", () => {}); setInterval(() => {}, 1000); // ${marker}`;
    const script = `require("node:child_process").spawn(process.execPath, ["-e", ${JSON.stringify(ignoreTerm)}], { stdio: "ignore" }); ${ignoreTerm}`;
    const stubborn = spawn(process.execPath, ["-e", script], { detached: true, stdio: "ignore" });
    const polite = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], { detached: true, stdio: "ignore" });
    for (let i = 0; processesNaming(marker).length < 2 && i < 100; i++) await new Promise((r) => setTimeout(r, 50));
    expect(processesNaming(marker).length).toBe(2);

    const t = Date.now();
    const killed = await stopGroups([stubborn.pid!, polite.pid!], 500);
    expect(Date.now() - t).toBeLessThan(2000);
    expect(killed).toEqual([stubborn.pid]);
    expect(processesNaming(marker)).toEqual([]);
  });
});
