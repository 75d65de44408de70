// CPU time (user + system) of this process and every process it starts, however they end.
// Where a cgroup v1 cpuacct hierarchy is writable (root), this process moves into a group of its
// own, whose counter includes every descendant, also those killed or orphaned. Otherwise, from
// /proc: for each live process of the tree its own and its reaped children's times (a process
// killed before its parent reaped its children loses theirs: an undercount, said in the output).
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from "node:fs";
import path from "node:path";

const CPUACCT = "/sys/fs/cgroup/cpuacct";
const TICK_MS = 1000 / Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim() || 100);

export interface CpuMeter {
  /** "cgroup" (exact) or "proc" (live tree, may undercount). */
  kind: "cgroup" | "proc";
  /** Milliseconds of CPU used so far by this process and everything below it. */
  ms(): number;
  close(): void;
}

export function cpuMeter(): CpuMeter {
  const dir = path.join(CPUACCT, `bench-cpu-${process.pid}`);
  try {
    if (!existsSync(path.join(CPUACCT, "cpuacct.usage"))) throw new Error("no cpuacct");
    mkdirSync(dir);
    writeFileSync(path.join(dir, "cgroup.procs"), String(process.pid));
    const close = () => {
      try {
        writeFileSync(path.join(CPUACCT, "cgroup.procs"), String(process.pid));
        rmdirSync(dir);
      } catch {
        /* already removed, or a process of the tree still in it */
      }
    };
    // also when the benchmark stops on an error
    process.once("exit", close);
    return { kind: "cgroup", ms: () => Number(readFileSync(path.join(dir, "cpuacct.usage"), "utf8")) / 1e6, close };
  } catch {
    return { kind: "proc", ms: () => procTreeMs(), close() {} };
  }
}

function procTreeMs(root = process.pid): number {
  const all = new Map<number, { ppid: number; ticks: number }>();
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const s = readFileSync(`/proc/${name}/stat`, "utf8");
      // the command name may hold spaces and parentheses: fields count from its last ")"
      const f = s.slice(s.lastIndexOf(")") + 2).split(" ");
      all.set(Number(name), { ppid: Number(f[1]), ticks: Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]) });
    } catch {
      /* gone meanwhile: its time is in its parent's children times */
    }
  }
  const kids = new Map<number, number[]>();
  for (const [pid, st] of all) kids.set(st.ppid, [...(kids.get(st.ppid) ?? []), pid]);
  let ticks = 0;
  const todo = [root];
  for (let i = 0; i < todo.length && i < 100_000; i++) {
    ticks += all.get(todo[i]!)?.ticks ?? 0;
    todo.push(...(kids.get(todo[i]!) ?? []));
  }
  return ticks * TICK_MS;
}
