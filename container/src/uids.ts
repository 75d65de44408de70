// Per-job uids. When the server runs as root, every job folder is owned by a uid of its own, leased
// from a range (ENGINE_UID_BASE, ENGINE_UIDS) for as long as the folder exists: the engine started
// in it, the tools that run in it and the files they write all have that uid, and no other job's
// process does. So one job's processes, files and per-uid limits are invisible to another's, even
// where the sandbox's namespaces are not available (see the safe mode in config.ts). The uid is
// never the server's (root): server state (formats, runtime files) belongs to a uid no engine has.
import { execFile } from "node:child_process";

export interface UidRange {
  base: number;
  count: number;
}

export interface Owner {
  uid: number;
  gid: number;
}

interface Lease {
  owner: Owner;
  /** No pid namespace ends the job's processes with it: kill what is left of the uid on release. */
  sweep: boolean;
}

const byDir = new Map<string, Lease>();
const inUse = new Set<number>();

export class UidsExhausted extends Error {}

/** Tries at random before a scan: leases are few next to the range, so one try almost always does. */
const RANDOM_TRIES = 32;

/**
 * Leases a free uid of `range` for the job folder `dir` (its gid is the same number). Chosen at
 * random, so two servers on one host (tests) rarely pick the same one. Undefined without a range:
 * engines then run as the server's own uid.
 */
export function leaseOwner(range: UidRange | undefined, dir: string, sweep: boolean): Owner | undefined {
  if (!range) return undefined;
  const held = byDir.get(dir);
  if (held) return held.owner;
  let uid: number | undefined;
  for (let i = 0; i < RANDOM_TRIES && uid === undefined; i++) {
    const u = range.base + Math.floor(Math.random() * range.count);
    if (!inUse.has(u)) uid = u;
  }
  for (let u = range.base; uid === undefined && u < range.base + range.count; u++) if (!inUse.has(u)) uid = u;
  if (uid === undefined) throw new UidsExhausted(`all ${range.count} job uids (ENGINE_UIDS) are in use`);
  inUse.add(uid);
  const owner = { uid, gid: uid };
  byDir.set(dir, { owner, sweep });
  return owner;
}

/** The owner leased for `dir`, if any. */
export function ownerOf(dir: string): Owner | undefined {
  return byDir.get(dir)?.owner;
}

/**
 * Gives `dir`'s uid back once the folder is gone. When leased with `sweep` (no pid namespace ends
 * the job's processes for us), every process still running under that uid is killed first, by a
 * `kill -1` sent as that uid, which reaches exactly the processes of that uid: those of this job.
 */
export async function releaseOwner(dir: string): Promise<void> {
  const lease = byDir.get(dir);
  if (!lease) return;
  byDir.delete(dir);
  if (lease.sweep) await killAllOf(lease.owner);
  inUse.delete(lease.owner.uid);
}

/** Kills every process of `owner`'s uid (none left is not an error). */
export function killAllOf(owner: Owner): Promise<void> {
  return new Promise((resolve) => {
    execFile("/bin/kill", ["-KILL", "-1"], { uid: owner.uid, gid: owner.gid, timeout: 5000, env: { PATH: "/usr/bin:/bin" } }, () => resolve());
  });
}

/** How many uids are leased (for /healthz and tests). */
export function leasedUids(): number {
  return inUse.size;
}
