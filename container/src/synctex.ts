// POST /synctex: positions between a compile's sources and its PDF, from the SyncTeX file a zip
// output carried (`synctex: true`). Forward (`file`, `line`, `column`: where in the PDF) and
// reverse (`page`, `x`, `y`: which source line). TeX Live's `synctex` CLI reads the file: it is
// the caller's bytes, so it runs like every tool of a job: in a job folder of its own, in the
// sandbox, as that folder's uid, under a deadline and the job caps.
import { promises as fs, constants } from "node:fs";
import path from "node:path";
import { createGunzip } from "node:zlib";
import type { Config } from "./config.ts";
import { spawnLimited, spawnOptions, jobDirSeen } from "./engine.ts";
import type { Fairness } from "./fairness.ts";
import { makeJobDir, ownBy, removeDir } from "./pool.ts";
import { exitOf, runToExit } from "./supervise.ts";
import { WorkDir } from "./workdir.ts";
import type { SynctexQuery } from "./synctex-query.ts";

export interface SynctexPosition {
  /** Forward: the page and the box, in PDF points (bp) from the page's top left corner. */
  page?: number;
  x?: number;
  y?: number;
  width?: number;
  height?: number;
  /** Reverse: the project file (null: a file of the TeX installation), its line and column (-1: unknown). */
  file?: string | null;
  line?: number;
  column?: number;
}

/** What one query may cost: its time, and what is read of the tool's answer. */
const QUERY_TIMEOUT_MS = 10_000;
const MAX_OUTPUT = 256 * 1024;
const MAX_POSITIONS = 100;
/** How much of the file is inflated to find the job's folder (its first lines name the main file). */
const HEAD_BYTES = 64 * 1024;

/**
 * The folder the compile's paths start with, from the file's first `Input:` line (the main file,
 * `/job/paper/./report.tex` in the sandbox, the job folder's host path without it): `/job/`.
 */
export function synctexRoot(head: string): { root: string; sub: string } | undefined {
  const m = /^Input:\d+:(.*)$/m.exec(head.slice(0, HEAD_BYTES));
  const main = m?.[1];
  if (!main) return undefined;
  const host = main.search(/\/jobs\/[0-9a-f]{32}\//);
  const at = main.startsWith("/job/") ? 5 : host >= 0 ? host + 39 : -1;
  if (at < 0) return undefined;
  // the main file's folder: the engine ran there, so the paths of files found from it start with it
  const sub = path.posix.dirname(path.posix.normalize(main.slice(at)));
  return { root: main.slice(0, at), sub: sub === "." ? "" : sub };
}

/**
 * How the compile may have recorded a project file: from the project root (found through the
 * search path), or from the main file's folder (`paper/./x.tex`, `paper/../common/x.tex`: SyncTeX
 * matches `./` but not `..`).
 */
export function recordedNames(file: string, root: string, sub: string): string[] {
  const names = [`${root}${file}`];
  if (sub) {
    const rel = path.posix.relative(sub, file);
    if (rel.startsWith("../")) names.push(`${root}${sub}/${rel}`);
  }
  return names;
}

/** The project path of a recorded input (`/job/paper/./../x.tex` -> `x.tex`); null outside the project. */
export function projectPath(recorded: string, root: string): string | null {
  if (!recorded.startsWith(root)) return null;
  const p = path.posix.normalize(recorded.slice(root.length));
  return p.startsWith("../") || p === ".." || p.startsWith("/") ? null : p;
}

/** The result blocks of `synctex view` or `synctex edit`. */
export function parseSynctexOutput(out: string, kind: SynctexQuery["kind"], root: string): SynctexPosition[] {
  const positions: SynctexPosition[] = [];
  let cur: Record<string, string> | undefined;
  const flush = () => {
    if (!cur) return;
    if (kind === "forward" && cur.Page) positions.push({ page: Number(cur.Page), x: Number(cur.h), y: Number(cur.v), width: Number(cur.W), height: Number(cur.H) });
    if (kind === "reverse" && cur.Input) positions.push({ file: projectPath(cur.Input, root), line: Number(cur.Line), column: Number(cur.Column) });
    cur = undefined;
  };
  for (const line of out.split("\n")) {
    const i = line.indexOf(":");
    if (i < 0) continue;
    const k = line.slice(0, i);
    // every result starts with its Output line (view) or Output then Input (edit)
    if (k === "Output") flush();
    if (k === "Output" || cur) (cur ??= {})[k] = line.slice(i + 1);
    if (positions.length >= MAX_POSITIONS) break;
  }
  flush();
  // a view result's box: h, v its left and baseline; TeX's boxes all have positive sizes
  return positions.filter((p) => Object.values(p).every((v) => v === null || typeof v === "string" || Number.isFinite(v)));
}

/** The first HEAD_BYTES of the inflated file ("" when it is not gzip). */
async function inflateHead(gz: Buffer): Promise<string> {
  return new Promise((resolve) => {
    const z = createGunzip();
    const parts: Buffer[] = [];
    let n = 0;
    const done = () => resolve(Buffer.concat(parts).subarray(0, HEAD_BYTES).toString("utf8"));
    z.on("data", (c: Buffer) => {
      parts.push(c);
      n += c.length;
      if (n >= HEAD_BYTES) {
        z.destroy();
        done();
      }
    });
    z.on("end", done);
    z.on("error", () => resolve(Buffer.concat(parts).toString("utf8")));
    z.end(gz);
  });
}

export type SynctexAnswer = { ok: true; positions: SynctexPosition[] } | { ok: false; status: number; code: string; message: string };

/** Answers `query` from the SyncTeX file `gz`; the tool runs in the sandbox of a folder made for it. */
export async function querySynctex(cfg: Config, fairness: Fairness, gz: Buffer, query: SynctexQuery, signal?: AbortSignal): Promise<SynctexAnswer> {
  const where = synctexRoot(await inflateHead(gz));
  if (!where) return { ok: false, status: 400, code: "invalid_request", message: "The body is not a SyncTeX file of this compile server (gzip, naming its main file first)." };
  const dir = await makeJobDir(cfg);
  const job = fairness.begin(undefined);
  try {
    const name = "texpool.synctex.gz";
    const fh = await fs.open(path.join(dir, name), constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
    try {
      await fh.writeFile(gz);
    } finally {
      await fh.close();
    }
    await ownBy(dir, path.join(dir, name));
    const seen = jobDirSeen(dir, cfg.sandbox);
    const pdf = `${seen}/texpool.pdf`;
    const deadline = Date.now() + QUERY_TIMEOUT_MS;
    const run = async (args: string[]): Promise<SynctexAnswer> => {
      const child = spawnLimited("synctex", args, spawnOptions(cfg, dir));
      child.stdin!.end();
      let out = "";
      child.stdout!.on("data", (c: Buffer) => {
        if (out.length < MAX_OUTPUT) out += c.toString("utf8");
      });
      child.stderr!.resume();
      const caps = { maxEntries: 16, maxBytes: cfg.limits.maxJobDirBytes, maxLogBytes: cfg.limits.maxLogBytes, logName: "texpool.log" };
      const r = await runToExit(child, exitOf(child), new WorkDir(dir), caps, { deadline, signal, prio: job });
      if (r.ending === "aborted") return { ok: false, status: 503, code: "shutting_down", message: "The compile server is shutting down." };
      if (r.ending !== "exit") return { ok: false, status: 422, code: "synctex_failed", message: "The SyncTeX query did not finish within its limits." };
      return { ok: true, positions: parseSynctexOutput(out, query.kind, where.root) };
    };
    if (query.kind === "reverse") return await run(["edit", "-o", `${query.page}:${query.x}:${query.y}:${pdf}`]);
    let answer: SynctexAnswer = { ok: true, positions: [] };
    // the recorded paths are the compile's: the query names its file the same way
    for (const name of recordedNames(query.file, where.root, where.sub)) {
      answer = await run(["view", "-i", `${query.line}:${query.column}:${name}`, "-o", pdf]);
      if (!answer.ok || answer.positions.length > 0) break;
    }
    return answer;
  } finally {
    job.end();
    await removeDir(dir);
  }
}
