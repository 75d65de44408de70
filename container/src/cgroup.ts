// Per-job control groups: a cap on the processes and on the memory of one job in all (every
// engine pass, tool and program it starts), which per-process rlimits cannot give. RLIMIT_NPROC
// counts every process of a uid, and all engines share one, so one job's process flood would fail
// another account's job; a cgroup's pids.max counts only its own.
//
// cgroup v2 (the unified hierarchy, as in most container runtimes) is used when the server may
// create groups below its own with the pids and memory controllers; else cgroup v1's pids and
// memory hierarchies; else none (the per-process rlimits and the job folder watch remain, and
// /healthz says so). Whether Cloudflare's container runtime delegates a writable cgroup to the
// container cannot be tested here: where it does not, the server runs in that fallback.
import { existsSync, promises as fs, readFileSync } from "node:fs";
import path from "node:path";

export type CgroupMode = "v2" | "v1" | "none";

export interface JobCaps {
  /**
   * Processes (and threads) of the job at once; undefined: no process cap, where that saves the
   * time a move into cgroup v1's pids hierarchy takes (10-15 ms per process, waited for by the job).
   */
  processes?: number | undefined;
  /** Memory of the job's processes in all, bytes. */
  memoryBytes: number;
}

const ROOT = "/sys/fs/cgroup";
/** How long removal waits for a group's killed processes to be gone. */
const REMOVE_TRIES = 50;

/** A job's group(s): one directory in v2, one per controller in v1. */
export class JobCgroup {
  private readonly dirs: string[];
  private readonly mode: CgroupMode;
  constructor(mode: CgroupMode, dirs: string[]) {
    this.mode = mode;
    this.dirs = dirs;
  }

  /**
   * Moves `pid` and every process below it into the group. Only while none of them can fork (an
   * engine blocked on its go line, a `held` spawn): a child forked meanwhile would stay outside.
   */
  async adopt(pid: number | undefined): Promise<void> {
    if (pid === undefined) return;
    const pids = tree(pid);
    // the hierarchies are independent: moved in parallel (each move waits for the kernel's RCU grace period)
    await Promise.all(this.dirs.map(async (d) => {
      for (const p of pids) await fs.writeFile(path.join(d, "cgroup.procs"), String(p)).catch(() => {});
    }));
  }

  /** Whether the kernel killed a process of the job for its memory cap. */
  oomKilled(): boolean {
    const file = this.mode === "v2" ? "memory.events" : "memory.oom_control";
    for (const d of this.dirs) {
      try {
        const m = /^oom_kill (\d+)$/m.exec(readFileSync(path.join(d, file), "utf8"));
        if (m && Number(m[1]) > 0) return true;
      } catch {
        /* not the memory group */
      }
    }
    return false;
  }

  /** Kills whatever of the job is still running and removes the group. */
  async remove(): Promise<void> {
    for (const d of this.dirs) {
      if (this.mode === "v2") await fs.writeFile(path.join(d, "cgroup.kill"), "1").catch(() => {});
      for (let i = 0; i < REMOVE_TRIES; i++) {
        const procs = await fs.readFile(path.join(d, "cgroup.procs"), "utf8").catch(() => "");
        for (const p of procs.split("\n").filter(Boolean)) {
          try {
            process.kill(Number(p), "SIGKILL");
          } catch {}
        }
        if (await fs.rmdir(d).then(() => true, (e: NodeJS.ErrnoException) => e.code === "ENOENT")) break;
        await new Promise((r) => setTimeout(r, 20));
      }
    }
  }
}

/** `pid` and its descendants (from /proc's children lists), parents first. */
function tree(pid: number): number[] {
  const out = [pid];
  for (let i = 0; i < out.length && out.length < 64; i++) {
    const p = out[i]!;
    try {
      for (const c of readFileSync(`/proc/${p}/task/${p}/children`, "utf8").split(" ")) if (c.trim()) out.push(Number(c));
    } catch {
      /* gone */
    }
  }
  return out;
}

export interface Cgroups {
  mode: CgroupMode;
  /** Why the mode is not v2 (what was tried), for /healthz and the start-up line. */
  reason?: string;
  /** A new group for one job, or undefined when groups are not available (or creating one failed). */
  create(id: string, caps: JobCaps): Promise<JobCgroup | undefined>;
}

const NONE = (reason: string): Cgroups => ({ mode: "none", reason, create: async () => undefined });

/** This process's cgroup path per controller ("" for v2's unified hierarchy), from /proc/self/cgroup. */
function ownPaths(): Map<string, string> {
  const out = new Map<string, string>();
  try {
    for (const line of readFileSync("/proc/self/cgroup", "utf8").split("\n")) {
      const m = /^\d+:([^:]*):(.*)$/.exec(line);
      if (!m) continue;
      for (const c of m[1]!.split(",")) out.set(c, m[2]!);
    }
  } catch {}
  return out;
}

async function writable(dir: string): Promise<boolean> {
  const probe = path.join(dir, `texpool-probe-${process.pid}`);
  try {
    await fs.mkdir(probe);
    await fs.rmdir(probe);
    return true;
  } catch {
    return false;
  }
}

/**
 * Finds what the kernel lets this server do. v2: the server moves itself into a leaf group
 * (`server`) of its own, since a group with processes cannot hand controllers to its children,
 * then enables pids and memory for the groups beside it.
 */
export async function detectCgroups(prefix = "texpool"): Promise<Cgroups> {
  const own = ownPaths();
  const tried: string[] = [];
  const unified = own.get("");
  if (unified !== undefined && existsSync(path.join(ROOT, "cgroup.controllers"))) {
    const base = path.join(ROOT, unified);
    const ctl = readFileSync(path.join(base, "cgroup.controllers"), "utf8");
    if (!ctl.includes("pids") || !ctl.includes("memory")) tried.push(`v2: controllers "${ctl.trim()}" lack pids or memory`);
    else if (!(await writable(base))) tried.push(`v2: ${base} is not writable`);
    else {
      const leaf = path.join(base, `${prefix}-server`);
      await fs.mkdir(leaf).catch(() => {});
      const moved = await fs.writeFile(path.join(leaf, "cgroup.procs"), String(process.pid)).then(() => true, () => false);
      const enabled = moved && (await fs.writeFile(path.join(base, "cgroup.subtree_control"), "+pids +memory").then(() => true, () => false));
      if (enabled) return groups("v2", [base], prefix);
      tried.push(`v2: could not enable pids and memory below ${base}`);
    }
  }
  const pids = own.get("pids");
  const memory = own.get("memory");
  if (pids !== undefined && memory !== undefined) {
    const dirs = [path.join(ROOT, "pids", pids), path.join(ROOT, "memory", memory)];
    if (dirs.every((d) => existsSync(d)) && (await writable(dirs[0]!)) && (await writable(dirs[1]!))) return groups("v1", dirs, prefix, tried.join("; ") || undefined);
    tried.push("v1: the pids and memory hierarchies are not writable");
  } else tried.push("v1: no pids and memory hierarchies");
  return NONE(tried.join("; "));
}

function groups(mode: "v1" | "v2", bases: string[], prefix: string, reason?: string): Cgroups {
  return {
    mode,
    ...(reason ? { reason } : {}),
    async create(id, caps) {
      // v1: bases are [pids, memory]; without a process cap the pids group is not made
      const used = mode === "v1" && caps.processes === undefined ? bases.slice(1) : bases;
      const dirs = used.map((b) => path.join(b, `${prefix}-job-${id}`));
      const g = new JobCgroup(mode, dirs);
      try {
        for (const d of dirs) await fs.mkdir(d);
        const set = (file: string, v: number) => Promise.any(dirs.map((d) => fs.writeFile(path.join(d, file), String(v))));
        if (caps.processes !== undefined) await set("pids.max", caps.processes);
        if (mode === "v2") {
          await set("memory.max", caps.memoryBytes);
          await set("memory.swap.max", 0).catch(() => {});
        } else {
          await set("memory.limit_in_bytes", caps.memoryBytes);
          await set("memory.memsw.limit_in_bytes", caps.memoryBytes).catch(() => {});
        }
        return g;
      } catch {
        await g.remove();
        return undefined;
      }
    },
  };
}
