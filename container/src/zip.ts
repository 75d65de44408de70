// A minimal zip writer for the compile server's answers (several page images, or the PDF with its
// log): entries are stored or deflated in memory, so the total is bounded by what the caller
// collected (each output was read with a size cap). No zip64: callers stay far below 4 GiB.
import { crc32, deflateRawSync } from "node:zlib";

export interface ZipEntry {
  name: string;
  data: Buffer;
  /** Deflate the entry (text: logs, SVG); images and PDFs are stored as they are. */
  deflate?: boolean;
}

/** Zip's limits for one archive without zip64. */
const MAX_ENTRIES = 0xffff;
const MAX_BYTES = 0xffffffff;

/** DOS date and time of 1980-01-01 00:00: a fixed stamp, so the same outputs give the same bytes. */
const DOS_TIME = 0;
const DOS_DATE = (0 << 9) | (1 << 5) | 1;

export function zip(entries: readonly ZipEntry[]): Buffer {
  if (entries.length > MAX_ENTRIES) throw new Error(`zip: ${entries.length} entries, at most ${MAX_ENTRIES}`);
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const e of entries) {
    const name = Buffer.from(e.name, "utf8");
    const body = e.deflate ? deflateRawSync(e.data) : e.data;
    const method = e.deflate ? 8 : 0;
    const crc = crc32(e.data);
    const fields = { method, crc, compressed: body.length, size: e.data.length, nameLength: name.length };
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    writeEntryFields(local, 4, fields);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4);
    writeEntryFields(central, 6, fields);
    central.writeUInt32LE(offset, 42);
    locals.push(local, name, body);
    centrals.push(central, name);
    offset += local.length + name.length + body.length;
    if (offset > MAX_BYTES) throw new Error("zip: larger than 4 GiB");
  }
  const dir = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(dir.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, dir, end]);
}

/**
 * The run of fields a local header (from byte 4) and its central directory record (from byte 6)
 * share: version needed, flags (bit 11: the name is UTF-8), method, time, date, CRC, sizes, name length.
 */
function writeEntryFields(b: Buffer, at: number, f: { method: number; crc: number; compressed: number; size: number; nameLength: number }): void {
  b.writeUInt16LE(20, at);
  b.writeUInt16LE(0x0800, at + 2);
  b.writeUInt16LE(f.method, at + 4);
  b.writeUInt16LE(DOS_TIME, at + 6);
  b.writeUInt16LE(DOS_DATE, at + 8);
  b.writeUInt32LE(f.crc, at + 10);
  b.writeUInt32LE(f.compressed, at + 14);
  b.writeUInt32LE(f.size, at + 18);
  b.writeUInt16LE(f.nameLength, at + 22);
}
