// xelatex's PDF driver, started with its engine. A fresh xdvipdfmx spends most of a small job's
// driver run before it reads anything of the job: the sandbox's set-up, then kpathsea's (texmf.cnf
// and ~4 MB of ls-R databases, ~70 ms of CPU). So with each warm xelatex engine (sandbox only) an
// xdvipdfmx starts in the same job folder, sandbox, uid and limits, and blocks on opening its
// configuration: `dvipdfmx.cfg` is a FIFO in a folder of the server's (bound read-only in its
// sandbox, so nothing of the job's can reach it). After the last pass the server writes the job's
// lean font map beside it and the lean configuration into the FIFO (driver.ts); the driver then
// reads the .xdv and writes the PDF. A driver that is not ready, or fails, is replaced by a run of
// its own with the installation's configuration (job.ts runDriver), as before.
import { execFile, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { constants, promises as fs } from "node:fs";
import type { FileHandle } from "node:fs/promises";
import path from "node:path";
import type { Config } from "./config.ts";
import { driverArgs, DRIVER_MAP } from "./driver.ts";
import { spawnLimited, spawnOptions } from "./engine.ts";
import { SANDBOX_DRIVER } from "./sandbox.ts";
import { exitOf, killGroup, type Exit } from "./supervise.ts";
import type { JobCgroup } from "./cgroup.ts";

/** How long a started driver may take to reach its configuration (its set-up takes ~0.1 s). */
const READY_MS = 10_000;
const POLL_MS = 10;
/** How long a job's last pass waits for its driver to be ready before it runs one of its own. */
const BEGIN_WAIT_MS = 2000;
/** What is kept of the driver's output (its fatal line is in the job's error). */
const MAX_OUTPUT = 64 * 1024;

/** The server's folder of warm drivers' FIFOs and maps (0711: a driver's folder is found by its name only). */
export function driversDir(cfg: { jobRoot: string }): string {
  return path.join(cfg.jobRoot, ".runtime", "drivers");
}

export interface WarmDriverSpec {
  /** The engine's job folder (host) and the main file's folder in it. */
  jobDir: string;
  subdir?: string | undefined;
  /** The job's name: the driver reads `<base>.xdv` and writes `<base>.pdf`. */
  base: string;
  /** The engine's environment additions (paths as the sandbox shows them). */
  env: Record<string, string>;
  shellEscape?: boolean | undefined;
  groupCapped?: boolean | undefined;
}

export class WarmDriver {
  readonly child: ChildProcess;
  readonly exited: Promise<Exit>;
  /** Resolves true once the driver waits on its configuration (then nothing of it forks until it is given one). */
  readonly ready: Promise<boolean>;
  output = "";
  private readonly dir: string;
  private writer: FileHandle | undefined;
  private done = false;

  private constructor(dir: string, child: ChildProcess) {
    this.dir = dir;
    this.child = child;
    this.exited = exitOf(child);
    const take = (c: Buffer) => {
      if (this.output.length < MAX_OUTPUT) this.output += c.toString("utf8");
    };
    child.stdout!.on("data", take);
    child.stderr!.on("data", take);
    child.stdin!.on("error", () => {});
    child.stdin!.end();
    this.ready = this.waitReady();
    void this.exited.then(() => this.dispose());
  }

  /** Starts a driver for the engine of `spec.jobDir`; undefined when it cannot be (then the job runs its own). */
  static async start(cfg: Config, spec: WarmDriverSpec): Promise<WarmDriver | undefined> {
    const dir = path.join(driversDir(cfg), randomBytes(16).toString("hex"));
    try {
      await fs.mkdir(driversDir(cfg), { recursive: true, mode: 0o711 });
      await fs.mkdir(dir, { mode: 0o755 });
      await mkfifo(path.join(dir, "dvipdfmx.cfg"));
    } catch {
      await fs.rm(dir, { recursive: true, force: true }).catch(() => {});
      return undefined;
    }
    const env = { ...spec.env, DVIPDFMXINPUTS: `${SANDBOX_DRIVER}:` };
    const args = driverArgs(`${spec.base}.xdv`, `${spec.base}.pdf`, `${SANDBOX_DRIVER}/${DRIVER_MAP}`);
    const opts = { ...spawnOptions(cfg, spec.jobDir), subdir: spec.subdir, env, driverDir: dir, shellEscape: spec.shellEscape, groupCapped: spec.groupCapped };
    return new WarmDriver(dir, spawnLimited("xdvipdfmx", args, opts));
  }

  /** The driver has opened its FIFO once a writer can open it without blocking; the writer is kept for run(). */
  private async waitReady(): Promise<boolean> {
    const fifo = path.join(this.dir, "dvipdfmx.cfg");
    for (const until = Date.now() + READY_MS; !this.done && Date.now() < until; ) {
      const fh = await fs.open(fifo, constants.O_WRONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW).catch(() => undefined);
      if (fh) {
        if (this.done) {
          await fh.close();
          return false;
        }
        this.writer = fh;
        return true;
      }
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
    return false;
  }

  /**
   * Waits (at most `waitMs`) until the driver is ready, moves it into the job's `group` (blocked on
   * its configuration it forks nothing: the whole sandbox moves) and gives it the job's font map and
   * configuration. false: not ready, or it could not take them (then it is killed).
   */
  async begin(map: string, cfgText: string, group: JobCgroup | undefined, waitMs = BEGIN_WAIT_MS): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<false>((r) => (timer = setTimeout(() => r(false), waitMs)));
    const ready = await Promise.race([this.ready, late]);
    clearTimeout(timer);
    if (!ready) {
      this.kill();
      return false;
    }
    await group?.adopt(this.child.pid);
    return this.give(map, cfgText);
  }

  private async give(map: string, cfgText: string): Promise<boolean> {
    const w = this.writer;
    this.writer = undefined;
    if (!w || this.done) return false;
    try {
      await fs.writeFile(path.join(this.dir, DRIVER_MAP), map, { encoding: "latin1", mode: 0o644, flag: "wx" });
      const data = Buffer.from(cfgText, "latin1");
      // an empty pipe takes the whole configuration (~9 KB of its 64 KB) at once
      const { bytesWritten } = await w.write(data, 0, data.length);
      if (bytesWritten !== data.length) throw new Error("short write");
      return true;
    } catch {
      this.kill();
      return false;
    } finally {
      await w.close().catch(() => {});
    }
  }

  kill(): void {
    killGroup(this.child);
  }

  /** Closes the FIFO's writer and removes the driver's folder once the driver has exited. */
  private async dispose(): Promise<void> {
    this.done = true;
    const w = this.writer;
    this.writer = undefined;
    await w?.close().catch(() => {});
    await fs.rm(this.dir, { recursive: true, force: true }).catch(() => {});
  }
}

function mkfifo(p: string): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile("mkfifo", ["-m", "0644", p], { timeout: 5000, env: { PATH: "/usr/bin:/bin" } }, (err) => (err ? reject(err) : resolve()));
  });
}
