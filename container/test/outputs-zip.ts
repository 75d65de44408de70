// Reads a zip answer for the tests, independently of the server's writer: the end record, the
// central directory, each local header, inflating and checking every entry's CRC-32 and size.
import { crc32, inflateRawSync } from "node:zlib";

export interface Unzipped {
  names: string[];
  read: (name: string) => Buffer;
}

export function unzip(z: Buffer): Unzipped {
  const end = z.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  if (end < 0 || end + 22 > z.length) throw new Error("zip: no end of central directory");
  const count = z.readUInt16LE(end + 10);
  let at = z.readUInt32LE(end + 16);
  const files = new Map<string, Buffer>();
  const names: string[] = [];
  for (let i = 0; i < count; i++) {
    if (z.readUInt32LE(at) !== 0x02014b50) throw new Error(`zip: bad central header ${i}`);
    const flags = z.readUInt16LE(at + 8);
    const method = z.readUInt16LE(at + 10);
    const crc = z.readUInt32LE(at + 16);
    const packed = z.readUInt32LE(at + 20);
    const size = z.readUInt32LE(at + 24);
    const nameLen = z.readUInt16LE(at + 28);
    const extraLen = z.readUInt16LE(at + 30);
    const commentLen = z.readUInt16LE(at + 32);
    const local = z.readUInt32LE(at + 42);
    const name = z.subarray(at + 46, at + 46 + nameLen).toString(flags & 0x0800 ? "utf8" : "latin1");
    at += 46 + nameLen + extraLen + commentLen;
    if (z.readUInt32LE(local) !== 0x04034b50) throw new Error(`zip: bad local header of ${name}`);
    if (z.subarray(local + 30, local + 30 + z.readUInt16LE(local + 26)).toString("utf8") !== name) throw new Error(`zip: local name of ${name} differs`);
    const start = local + 30 + z.readUInt16LE(local + 26) + z.readUInt16LE(local + 28);
    const raw = z.subarray(start, start + packed);
    const data = method === 8 ? inflateRawSync(raw) : method === 0 ? Buffer.from(raw) : undefined;
    if (!data) throw new Error(`zip: method ${method} of ${name}`);
    if (data.length !== size || crc32(data) !== crc) throw new Error(`zip: ${name} fails its size or CRC check`);
    names.push(name);
    files.set(name, data);
  }
  return {
    names,
    read: (name) => {
      const d = files.get(name);
      if (!d) throw new Error(`zip: no ${name}`);
      return d;
    },
  };
}
