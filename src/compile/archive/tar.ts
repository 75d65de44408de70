import { Gunzip } from "fflate";
import { ApiError } from "../../platform/errors.ts";
import { ARCHIVE_LIMITS, type ArchiveEntry, badArchive, Budget, concat, pushInSlices, shown } from "./budget.ts";

/*
 * A tar reader for what tar, GNU tar and bsdtar write: ustar names (with prefix), pax `path`
 * records and GNU long names. fflate un-gzips; tar itself is 512-byte headers, read here.
 */

const BLOCK = 512;
const utf8 = new TextDecoder("utf-8");

/** Inflates a gzip body, stopping at the budget's limits (a gzip bomb inflates no further). */
export function gunzip(data: Uint8Array, budget: Budget): Uint8Array {
  const chunks: Uint8Array[] = [];
  let size = 0;
  const g = new Gunzip((chunk) => {
    budget.inflated(chunk.byteLength);
    size += chunk.byteLength;
    chunks.push(chunk);
  });
  try {
    pushInSlices(data, (c, final) => g.push(c, final));
  } catch (err) {
    if (err instanceof ApiError) throw err;
    throw badArchive("is not a readable gzip file.");
  }
  return concat(chunks, size);
}

function text(h: Uint8Array, at: number, len: number): string {
  let end = at;
  while (end < at + len && h[end] !== 0) end++;
  return utf8.decode(h.subarray(at, end));
}

function octal(h: Uint8Array, at: number, len: number): number {
  if (h[at]! & 0x80) throw badArchive("has an entry with a base-256 size (over 8 GiB).");
  let n = 0;
  for (let i = at; i < at + len; i++) {
    const c = h[i]!;
    if (c === 0 || c === 0x20) {
      if (n > 0 || i > at) break;
      continue;
    }
    if (c < 0x30 || c > 0x37) throw badArchive("is corrupt (a tar header's number is not octal).");
    n = n * 8 + (c - 0x30);
  }
  return n;
}

function checksumOk(h: Uint8Array): boolean {
  let sum = 0;
  for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 0x20 : h[i]!;
  return sum === octal(h, 148, 8);
}

/** A pax extended header's `path` (records are `<len> <key>=<value>\n`). */
function paxPath(d: Uint8Array): string | undefined {
  let path: string | undefined;
  let i = 0;
  while (i < d.byteLength) {
    let len = 0;
    let j = i;
    while (j < d.byteLength && d[j]! >= 0x30 && d[j]! <= 0x39 && j - i < 10) len = len * 10 + (d[j++]! - 0x30);
    if (d[j] !== 0x20 || len <= j - i || i + len > d.byteLength) throw badArchive("is corrupt (bad pax header).");
    const record = utf8.decode(d.subarray(j + 1, i + len - 1));
    if (record.startsWith("path=")) path = record.slice(5);
    i += len;
  }
  return path;
}

export function untar(tar: Uint8Array, budget: Budget): ArchiveEntry[] {
  const out: ArchiveEntry[] = [];
  let longName: string | undefined;
  let at = 0;
  while (at + BLOCK <= tar.byteLength) {
    const h = tar.subarray(at, at + BLOCK);
    if (h.every((b) => b === 0)) break;
    budget.entry();
    if (!checksumOk(h)) throw badArchive("is corrupt (a tar header's checksum is wrong).");
    const size = octal(h, 124, 12);
    const type = String.fromCharCode(h[156]!);
    const start = at + BLOCK;
    if (start + size > tar.byteLength) throw badArchive("is corrupt (cut short).");
    at = start + Math.ceil(size / BLOCK) * BLOCK;
    const data = tar.subarray(start, start + size);
    const ustar = text(h, 257, 6) === "ustar";
    const headerName = ustar && h[345] ? `${text(h, 345, 155)}/${text(h, 0, 100)}` : text(h, 0, 100);
    if (type === "x" || type === "L") {
      if (size > ARCHIVE_LIMITS.maxMetaBytes) throw badArchive("has an extended header over 64 KiB.");
      longName = type === "x" ? paxPath(data) : text(data, 0, size);
      continue;
    }
    if (type === "g") continue; // global pax settings: nothing a project needs
    const name = longName ?? headerName;
    longName = undefined;
    if (type === "5") continue;
    if (type === "1" || type === "2") throw badArchive(`holds a ${type === "2" ? "symbolic" : "hard"} link (${shown(name)}); links are not allowed in a project: archive the file itself.`);
    if (type !== "0" && type !== "\0" && type !== "7") throw badArchive(`holds ${shown(name)}, which is not a regular file.`);
    budget.file();
    budget.content(size);
    out.push({ name, bytes: data });
  }
  return out;
}
