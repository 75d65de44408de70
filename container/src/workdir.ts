// A job's folder as the server touches it. Every program a document runs can replace any file or
// folder of its job with a symbolic link to anywhere on the host, at any moment, so nothing here
// resolves a path through the job's tree: each component is opened relative to the handle of its
// parent folder and never followed when it is a link (Linux resolves `/proc/self/fd/N/name` as
// `name` in the folder open as N: openat(2) semantics from Node, whose fs API has no *at calls).
// A folder that is not a real folder (a link, a file, gone) simply is not there for the server.
import { constants, promises as fs, type Dirent, type Stats } from "node:fs";
import type { FileHandle } from "node:fs/promises";

const { O_RDONLY, O_DIRECTORY, O_NOFOLLOW, O_NONBLOCK } = constants;
const DIR_FLAGS = O_RDONLY | O_DIRECTORY | O_NOFOLLOW;
// O_NONBLOCK: opening a FIFO the job made would otherwise block a thread of the pool for good
const FILE_FLAGS = O_RDONLY | O_NOFOLLOW | O_NONBLOCK;

/** The path of `name` inside the folder open as `fd`. */
const at = (fd: number, name = "") => (name ? `/proc/self/fd/${fd}/${name}` : `/proc/self/fd/${fd}`);

/**
 * Where job directories live under JOB_ROOT: a folder of their own, apart from the server's state
 * (precompiled formats, runtime files), so nothing of a job's is ever beside them.
 */
export function jobsDir(cfg: { jobRoot: string }): string {
  return `${cfg.jobRoot}/jobs`;
}

/** Folders deeper than this are never entered (a job's real trees are a few levels deep). */
export const MAX_DEPTH = 64;

/** `rel` in folder `sub` of the job ("" is its root), as a path relative to the root. */
export function inFolder(sub: string, rel: string): string {
  return sub ? `${sub}/${rel}` : rel;
}

/** Plain path segments of a relative path; undefined for "", ".", ".." or an empty segment. */
export function segments(rel: string): string[] | undefined {
  if (rel === "") return [];
  const parts = rel.split("/");
  for (const p of parts) if (p === "" || p === "." || p === "..") return undefined;
  return parts.length > MAX_DEPTH ? undefined : parts;
}

/** Opens folder `name` of the folder open as `fd` (root: a host path made by the server). */
async function openDir(fd: number | undefined, name: string): Promise<FileHandle | undefined> {
  return fs.open(fd === undefined ? name : at(fd, name), DIR_FLAGS).catch(() => undefined);
}

export type Overrun = "too_large" | "too_many_files" | "log_too_large";

export interface JobCaps {
  maxEntries: number;
  maxBytes: number;
  maxLogBytes: number;
  /** The log whose size is capped, relative to the job directory. */
  logName: string;
}

export class WorkDir {
  /** The folder's path on the host (made by the server; never below a path the job controls). */
  readonly host: string;

  constructor(host: string) {
    this.host = host;
  }

  /**
   * Runs `fn` with the handle of folder `rel` (relative to the root, "" for the root itself),
   * opened one component at a time without following links; undefined when any component is
   * not a real folder.
   */
  async inDir<T>(rel: string, fn: (fd: number) => Promise<T>): Promise<T | undefined> {
    const segs = segments(rel);
    if (!segs) return undefined;
    let cur = await openDir(undefined, this.host);
    try {
      for (const s of segs) {
        if (!cur) return undefined;
        const next = await openDir(cur.fd, s);
        await cur.close();
        cur = next;
      }
      if (!cur) return undefined;
      return await fn(cur.fd);
    } finally {
      await cur?.close().catch(() => {});
    }
  }

  /** Splits `rel` into its folder and last name; undefined when it is not a plain relative path. */
  private static split(rel: string): { dir: string; name: string } | undefined {
    const segs = segments(rel);
    if (!segs || segs.length === 0) return undefined;
    const i = rel.lastIndexOf("/");
    return i < 0 ? { dir: "", name: rel } : { dir: rel.slice(0, i), name: rel.slice(i + 1) };
  }

  /**
   * Runs `fn` with an open regular file of the job (reached through real folders, never through a
   * link); undefined when it is missing, not a regular file, or `fn` says so.
   */
  private async withFile<T>(rel: string, fn: (fh: FileHandle, st: Stats) => Promise<T | undefined>): Promise<T | undefined> {
    const p = WorkDir.split(rel);
    if (!p) return undefined;
    const r = await this.inDir(p.dir, async (fd) => {
      const fh = await fs.open(at(fd, p.name), FILE_FLAGS).catch(() => undefined);
      if (!fh) return undefined;
      try {
        const st = await fh.stat();
        return st.isFile() ? await fn(fh, st) : undefined;
      } finally {
        await fh.close();
      }
    });
    return r ?? undefined;
  }

  /** A regular file of the job: at most `max` bytes, from its start, or its last `max` bytes with `tail`. */
  readFile(rel: string, max: number, tail = false): Promise<Buffer | undefined> {
    return this.withFile(rel, async (fh, st) => {
      const len = Math.min(st.size, max);
      const buf = Buffer.alloc(len);
      const { bytesRead } = await fh.read(buf, 0, len, tail ? st.size - len : 0);
      return buf.subarray(0, bytesRead);
    });
  }

  /** Up to `max` bytes of a regular file of the job from `offset`, and the file's size then. */
  readFrom(rel: string, offset: number, max: number): Promise<{ data: Buffer; size: number } | undefined> {
    return this.withFile(rel, async (fh, st) => {
      const len = Math.max(0, Math.min(st.size - offset, max));
      const buf = Buffer.alloc(len);
      const { bytesRead } = len > 0 ? await fh.read(buf, 0, len, offset) : { bytesRead: 0 };
      return { data: buf.subarray(0, bytesRead), size: st.size };
    });
  }

  /**
   * Copies a regular file of the job of at most `max` bytes (not empty) to `dest`, a new file of the
   * server's (never replacing anything). Returns its size, or undefined (nothing written).
   */
  copyOut(rel: string, dest: string, max: number): Promise<number | undefined> {
    return this.withFile(rel, async (fh, st) => {
      if (st.size === 0 || st.size > max) return undefined;
      const out = await fs.open(dest, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | O_NOFOLLOW, 0o600);
      try {
        const buf = Buffer.alloc(Math.min(st.size, 1024 * 1024));
        let copied = 0;
        while (copied < st.size) {
          const { bytesRead } = await fh.read(buf, 0, Math.min(buf.length, st.size - copied), copied);
          if (bytesRead === 0) break;
          await out.write(buf, 0, bytesRead);
          copied += bytesRead;
        }
        return copied;
      } finally {
        await out.close();
      }
    });
  }

  /** Size of a regular file, undefined when missing or anything else. */
  async fileSize(rel: string): Promise<number | undefined> {
    const st = await this.lstat(rel);
    return st?.isFile() ? st.size : undefined;
  }

  /** lstat of `rel` (a link is reported as itself), reached through real folders only. */
  async lstat(rel: string): Promise<Stats | undefined> {
    const p = WorkDir.split(rel);
    if (!p) return undefined;
    return (await this.inDir(p.dir, (fd) => fs.lstat(at(fd, p.name)).catch(() => undefined))) ?? undefined;
  }

  /** Whether `rel` is a real folder reached through real folders ("" is the root). */
  async isDir(rel: string): Promise<boolean> {
    return (await this.inDir(rel, async () => true)) === true;
  }

  /** The entries of folder `rel` (at most `max`, in directory order), or [] when it is not a real folder. */
  async list(rel: string, max: number): Promise<Dirent[]> {
    const r = await this.inDir(rel, async (fd) => {
      const out: Dirent[] = [];
      const d = await fs.opendir(at(fd), { bufferSize: 128 }).catch(() => undefined);
      if (!d) return out;
      for await (const e of d) {
        out.push(e);
        if (out.length >= max) break; // iteration closes the handle when it breaks
      }
      return out;
    });
    return r ?? [];
  }

  /**
   * Moves every entry of this folder into `dest` (the next pass's folder), merging the folders
   * `dest` already has (the main file's, made when its engine started) and leaving the files it
   * already has (its own log) as they are. Entries named in `skipTop` stay. Renames work on the
   * entries themselves, so a link moves as a link and is never followed. Returns false when a
   * folder `dest` has is not a real folder here (the job replaced it): nothing more is moved.
   */
  async moveAllTo(dest: WorkDir, skipTop: ReadonlySet<string>): Promise<boolean> {
    const src = await openDir(undefined, this.host);
    const dst = await openDir(undefined, dest.host);
    try {
      if (!src || !dst) return false;
      return await moveEntries(src.fd, dst.fd, skipTop, 0);
    } finally {
      await src?.close().catch(() => {});
      await dst?.close().catch(() => {});
    }
  }

  /**
   * Hands the folder's tree to the next pass's uid: every entry owned by `from` (the previous
   * pass's uid, whose processes are all gone) gets `to`. Nothing else changes owner, so a name the
   * job pointed at anything else (a hard link) is left as it is; links are never followed (lchown
   * of the entry itself) and folders are entered through handles.
   */
  async handOver(from: number, to: { uid: number; gid: number }): Promise<void> {
    const root = await openDir(undefined, this.host);
    if (!root) return;
    try {
      await chownEntries(root.fd, from, to, 0);
    } finally {
      await root.close().catch(() => {});
    }
  }

  /**
   * One look at the folder while its programs run (they may change it meanwhile): entries are
   * counted from readdir alone and the count stops one past `maxEntries`; the log is one lstat;
   * only with `sizes` are regular files lstat()ed for the byte total. Folders are entered through
   * handles (a folder swapped for a link is not followed); one nested deeper than MAX_DEPTH
   * counts as too many files.
   */
  async check(caps: JobCaps, sizes: boolean): Promise<Overrun | undefined> {
    const log = await this.lstat(caps.logName);
    if (log && log.size > caps.maxLogBytes) return "log_too_large";
    const root = await openDir(undefined, this.host);
    if (!root) return undefined;
    const tally = { entries: 0, bytes: 0 };
    try {
      return await usage(root.fd, caps, sizes, tally, 0);
    } finally {
      await root.close().catch(() => {});
    }
  }
}

async function moveEntries(from: number, to: number, skip: ReadonlySet<string>, depth: number): Promise<boolean> {
  const names = await fs.readdir(at(from)).catch(() => [] as string[]);
  for (const name of names) {
    if (skip.has(name)) continue;
    const there = await fs.lstat(at(to, name)).catch(() => undefined);
    if (!there) {
      await fs.rename(at(from, name), at(to, name)).catch(() => {});
      continue;
    }
    if (!there.isDirectory()) continue; // the next process's own file
    if (depth >= MAX_DEPTH) return false;
    const sub = await openDir(from, name);
    if (!sub) return false; // a link, a file or nothing where the next pass needs a folder
    const into = await openDir(to, name);
    try {
      if (!into || !(await moveEntries(sub.fd, into.fd, new Set(), depth + 1))) return false;
    } finally {
      await sub.close().catch(() => {});
      await into?.close().catch(() => {});
    }
  }
  return true;
}

async function chownEntries(fd: number, from: number, to: { uid: number; gid: number }, depth: number): Promise<void> {
  const names = await fs.readdir(at(fd)).catch(() => [] as string[]);
  for (const name of names) {
    const st = await fs.lstat(at(fd, name)).catch(() => undefined);
    if (!st) continue;
    if (st.uid === from && !(st.isFile() && st.nlink > 1)) await fs.lchown(at(fd, name), to.uid, to.gid).catch(() => {});
    // a folder the next pass made already (the main file's) is its own, but what was moved into it is not
    if (!st.isDirectory() || (st.uid !== from && st.uid !== to.uid) || depth + 1 >= MAX_DEPTH) continue;
    const sub = await openDir(fd, name);
    if (!sub) continue;
    try {
      await chownEntries(sub.fd, from, to, depth + 1);
    } finally {
      await sub.close().catch(() => {});
    }
  }
}

async function usage(fd: number, caps: JobCaps, sizes: boolean, t: { entries: number; bytes: number }, depth: number): Promise<Overrun | undefined> {
  const d = await fs.opendir(at(fd), { bufferSize: 128 }).catch(() => undefined);
  if (!d) return undefined;
  const dirs: string[] = [];
  try {
    for await (const e of d) {
      if (++t.entries > caps.maxEntries) return "too_many_files";
      if (e.isDirectory()) dirs.push(e.name);
      else if (sizes && e.isFile()) {
        const st = await fs.lstat(at(fd, e.name)).catch(() => undefined);
        if (st) t.bytes += st.size;
        if (t.bytes > caps.maxBytes) return "too_large";
      }
    }
  } catch {
    /* the folder went away while being read */
  }
  for (const name of dirs) {
    if (depth + 1 >= MAX_DEPTH) return "too_many_files";
    const sub = await openDir(fd, name);
    if (!sub) continue; // replaced by a link or removed since
    try {
      const over = await usage(sub.fd, caps, sizes, t, depth + 1);
      if (over) return over;
    } finally {
      await sub.close().catch(() => {});
    }
  }
  return undefined;
}

/** Removal enters folders at most this deep; anything deeper goes with a plain removal later. */
const MAX_REMOVE_DEPTH = 256;
/** How long after removing what it reached a leftover tree waits (its processes are long dead then). */
const LEFTOVER_DELAY_MS = 2_000;

/**
 * Removes a job's folder and everything in it. A killed job's processes may still be running for
 * a moment (a sandbox dies after its outer process), so the tree is emptied through handles (an
 * entry swapped for a link is unlinked, never followed), a few rounds for what they add meanwhile.
 */
export async function removeTree(host: string, onGone?: () => void): Promise<void> {
  const root = await openDir(undefined, host);
  if (root) {
    try {
      await emptyDir(root.fd, 0);
    } finally {
      await root.close().catch(() => {});
    }
  }
  const gone = await fs.rmdir(host).then(
    () => true,
    (e: NodeJS.ErrnoException) => e.code === "ENOENT",
  );
  if (gone) onGone?.();
  else {
    const later = setTimeout(() => void fs.rm(host, { recursive: true, force: true, maxRetries: 3 }).then(onGone, () => {}), LEFTOVER_DELAY_MS);
    later.unref();
  }
}

async function emptyDir(fd: number, depth: number): Promise<void> {
  for (let round = 0; round < 3; round++) {
    const names = await fs.readdir(at(fd)).catch(() => [] as string[]);
    if (names.length === 0) return;
    for (const name of names) {
      const unlinked = await fs.unlink(at(fd, name)).then(
        () => true,
        () => false,
      );
      if (unlinked || depth >= MAX_REMOVE_DEPTH) continue;
      const sub = await openDir(fd, name);
      if (!sub) continue;
      try {
        await emptyDir(sub.fd, depth + 1);
      } finally {
        await sub.close().catch(() => {});
      }
      await fs.rmdir(at(fd, name)).catch(() => {});
    }
  }
}
