import { Inflate } from "fflate";
import { ApiError } from "../../platform/errors.ts";
import { ARCHIVE_LIMITS, type ArchiveEntry, badArchive, Budget, concat, pushInSlices, shown, tooLarge } from "./budget.ts";

/*
 * fflate inflates; the directory is read here because fflate's zip readers do not expose an entry's
 * file type (a symlink is told apart only by the Unix mode in the central directory's attributes).
 * Only the central directory is trusted for names and sizes, as unzip does.
 */

const EOCD = 0x06054b50;
const CENTRAL = 0x02014b50;
const LOCAL = 0x04034b50;
const S_IFMT = 0o170000;
const S_IFREG = 0o100000;
const S_IFDIR = 0o040000;
const S_IFLNK = 0o120000;
const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });

/** The end-of-central-directory record: in the last 22 bytes plus at most a 65,535-byte comment. */
function findEnd(v: DataView): number {
  const last = v.byteLength - 22;
  for (let i = last; i >= 0 && i >= last - 0xffff; i--) if (v.getUint32(i, true) === EOCD) return i;
  throw badArchive("is not a readable zip file (no end of central directory).");
}

export function unzip(data: Uint8Array, budget: Budget): ArchiveEntry[] {
  const v = new DataView(data.buffer, data.byteOffset, data.byteLength);
  if (data.byteLength < 22) throw badArchive("is not a readable zip file (too short).");
  const end = findEnd(v);
  const count = v.getUint16(end + 10, true);
  const dirSize = v.getUint32(end + 12, true);
  const dirStart = v.getUint32(end + 16, true);
  if (count === 0xffff || dirStart === 0xffffffff) throw badArchive("is a ZIP64 file; projects this small never need it: zip without ZIP64.");
  if (dirStart + dirSize > end) throw badArchive("is corrupt (its central directory is outside the file).");
  const out: ArchiveEntry[] = [];
  let p = dirStart;
  for (let i = 0; i < count; i++) {
    budget.entry();
    if (p + 46 > end || v.getUint32(p, true) !== CENTRAL) throw badArchive("is corrupt (bad central directory entry).");
    const madeBy = v.getUint16(p + 4, true) >> 8;
    const flags = v.getUint16(p + 8, true);
    const method = v.getUint16(p + 10, true);
    const size = v.getUint32(p + 20, true);
    const originalSize = v.getUint32(p + 24, true);
    const nameLen = v.getUint16(p + 28, true);
    const extraLen = v.getUint16(p + 30, true);
    const commentLen = v.getUint16(p + 32, true);
    const mode = madeBy === 3 ? v.getUint32(p + 38, true) >>> 16 : 0;
    const local = v.getUint32(p + 42, true);
    const next = p + 46 + nameLen + extraLen + commentLen;
    if (next > end) throw badArchive("is corrupt (bad central directory entry).");
    const name = decodeName(data.subarray(p + 46, p + 46 + nameLen));
    p = next;
    const type = mode & S_IFMT;
    if (name.endsWith("/") || type === S_IFDIR) continue;
    if (type === S_IFLNK) throw badArchive(`holds a symbolic link (${shown(name)}); links are not allowed in a project: archive the file itself.`);
    if (type !== 0 && type !== S_IFREG) throw badArchive(`holds ${shown(name)}, which is not a regular file.`);
    if (flags & 1) throw badArchive(`holds an encrypted entry (${shown(name)}).`);
    budget.file();
    out.push({ name, bytes: entryBytes(data, v, local, size, originalSize, method, name, budget) });
  }
  return out;
}

function decodeName(bytes: Uint8Array): string {
  try {
    return utf8.decode(bytes);
  } catch {
    throw badArchive("has an entry name that is not UTF-8.");
  }
}

function entryBytes(data: Uint8Array, v: DataView, local: number, size: number, originalSize: number, method: number, name: string, budget: Budget): Uint8Array {
  if (local + 30 > data.byteLength || v.getUint32(local, true) !== LOCAL) throw badArchive(`is corrupt (no local header for ${shown(name)}).`);
  const start = local + 30 + v.getUint16(local + 26, true) + v.getUint16(local + 28, true);
  if (start + size > data.byteLength) throw badArchive(`is corrupt (${shown(name)} is cut short).`);
  const raw = data.subarray(start, start + size);
  if (method === 0) {
    if (size !== originalSize) throw badArchive(`is corrupt (${shown(name)} has two sizes).`);
    budget.content(size);
    return raw;
  }
  // the declared size first: a bomb that says what it is never starts inflating
  if (originalSize > ARCHIVE_LIMITS.maxTotalBytes) throw tooLarge("totalBytes", `${shown(name)} is ${originalSize} bytes uncompressed, over the limit of ${ARCHIVE_LIMITS.maxTotalBytes}.`, ARCHIVE_LIMITS.maxTotalBytes);
  if (method !== 8) throw badArchive(`uses a compression method (${method}) other than deflate for ${shown(name)}.`);
  const chunks: Uint8Array[] = [];
  let got = 0;
  const inflate = new Inflate((chunk) => {
    got += chunk.byteLength;
    // never more than the directory declared: the limits were counted against it
    if (got > originalSize) throw badArchive(`is corrupt (${shown(name)} inflates past its declared size).`);
    budget.inflated(chunk.byteLength);
    budget.content(chunk.byteLength);
    chunks.push(chunk);
  });
  try {
    pushInSlices(raw, (c, final) => inflate.push(c, final));
  } catch (err) {
    if (err instanceof ApiError) throw err;
    throw badArchive(`is corrupt (${shown(name)} does not inflate).`);
  }
  if (got !== originalSize) throw badArchive(`is corrupt (${shown(name)} inflates to ${got} bytes, not ${originalSize}).`);
  return concat(chunks, got);
}
