// The zip row of the compile-server benchmark: a project of several files as an author keeps it
// (docs/project: chapters, a package of macros, a BibTeX database, a TikZ figure) plus a PNG made
// here, zipped; the server side unpacks it with the Worker's own code, the shell side with unzip.
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { crc32, deflateSync } from "node:zlib";
import { unzipSync, zipSync } from "fflate";
import { archiveProject } from "../../src/compile/archive/project.ts";
import type { Engine } from "../../container/src/config.ts";

const PROJECT = path.join(path.dirname(fileURLToPath(import.meta.url)), "docs", "project");

/** A 240x160 RGB gradient as a PNG: a raster figure of a realistic size, not stored in the repository. */
function gradientPng(): Uint8Array {
  const [w, h] = [240, 160];
  const raw = Buffer.alloc((w * 3 + 1) * h);
  for (let y = 0; y < h; y++) {
    const row = y * (w * 3 + 1);
    for (let x = 0; x < w; x++) raw.set([Math.floor((x * 255) / w), Math.floor((y * 255) / h), 128], row + 1 + x * 3);
  }
  const chunk = (type: string, data: Buffer) => {
    const td = Buffer.concat([Buffer.from(type, "latin1"), data]);
    const out = Buffer.alloc(8 + data.length + 4);
    out.writeUInt32BE(data.length, 0);
    td.copy(out, 4);
    out.writeUInt32BE(crc32(td) >>> 0, 8 + data.length);
    return out;
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(w, 0);
  ihdr.writeUInt32BE(h, 4);
  ihdr.set([8, 2, 0, 0, 0], 8);
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk("IHDR", ihdr), chunk("IDAT", deflateSync(raw, { level: 9 })), chunk("IEND", Buffer.alloc(0))]);
}

function filesUnder(dir: string, prefix = ""): Record<string, Uint8Array> {
  const out: Record<string, Uint8Array> = {};
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const rel = prefix + e.name;
    if (e.isDirectory()) Object.assign(out, filesUnder(path.join(dir, e.name), `${rel}/`));
    else out[rel] = readFileSync(path.join(dir, e.name));
  }
  return out;
}

/** The project zipped as `zip -r` would (deflate, level 6). */
export function projectZip(): Uint8Array {
  return zipSync({ ...filesUnder(PROJECT), "figures/gradient.png": gradientPng() }, { level: 6 });
}

/** The compile server's request for the zip: what the Worker's archive middleware turns it into. */
export function zipRequestBody(engine: Engine, zip: Uint8Array): string {
  return JSON.stringify({ engine, ...archiveProject(zip) });
}

function run(cmd: string, args: string[], cwd: string, okCodes: number[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const c = spawn(cmd, args, { cwd, stdio: "ignore" });
    c.on("exit", (code) => (okCodes.includes(code ?? -1) ? resolve() : reject(new Error(`${cmd} exit ${code}`))));
  });
}

/**
 * The bare engine on the same files: unzip into a fresh folder, the engine `passes` times with BibTeX
 * after the first pass when the server ran it (`tools`, its X-Compile-Tools). The time of all of it.
 */
export async function zipCli(engine: Engine, zip: Uint8Array, passes: number, tools: string): Promise<number> {
  const t = performance.now();
  const dir = mkdtempSync(path.join(os.tmpdir(), "bench-zip-"));
  for (const [name, bytes] of Object.entries(unzipSync(zip))) {
    mkdirSync(path.join(dir, path.dirname(name)), { recursive: true });
    writeFileSync(path.join(dir, name), bytes);
  }
  for (let i = 0; i < passes; i++) {
    await run(engine, ["-interaction=batchmode", "main.tex"], dir, [0]);
    if (i === 0 && tools.includes("bibtex")) await run("bibtex", ["main"], dir, [0]);
  }
  const ms = performance.now() - t;
  rmSync(dir, { recursive: true, force: true });
  return ms;
}
