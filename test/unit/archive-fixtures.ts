// Archives built byte by byte for the archive tests: fflate writes zips (with Unix modes) and gzip;
// tar headers are written here, so that a test can make any entry type a real tar would hold.
import { gzipSync, zipSync, type Zippable } from "fflate";

const enc = new TextEncoder();
export const bytes = (s: string) => enc.encode(s);

/** A zip of `files` (text or bytes); `modes` sets an entry's Unix mode (e.g. 0o120777 for a symlink). */
export function zipOf(files: Record<string, string | Uint8Array>, modes: Record<string, number> = {}): Uint8Array {
  const z: Zippable = {};
  for (const [name, content] of Object.entries(files)) {
    const data = typeof content === "string" ? bytes(content) : content;
    z[name] = modes[name] === undefined ? data : [data, { os: 3, attrs: modes[name]! << 16 }];
  }
  return zipSync(z);
}

export type TarEntry = { name: string; content?: string | Uint8Array; type?: string; linkTo?: string; pax?: Record<string, string> };

function header(name: string, size: number, type: string, linkTo = ""): Uint8Array {
  const h = new Uint8Array(512);
  const put = (s: string, at: number, len: number) => h.set(bytes(s).subarray(0, len), at);
  const num = (n: number, at: number, len: number) => put(`${n.toString(8).padStart(len - 1, "0")}\0`, at, len);
  put(name, 0, 100);
  num(0o644, 100, 8);
  num(0, 108, 8);
  num(0, 116, 8);
  num(size, 124, 12);
  num(0, 136, 12);
  put(type, 156, 1);
  put(linkTo, 157, 100);
  put("ustar\0", 257, 6);
  put("00", 263, 2);
  put("        ", 148, 8);
  let sum = 0;
  for (const b of h) sum += b;
  put(`${sum.toString(8).padStart(6, "0")}\0 `, 148, 8);
  return h;
}

function padded(data: Uint8Array): Uint8Array {
  const out = new Uint8Array(Math.ceil(data.byteLength / 512) * 512);
  out.set(data);
  return out;
}

function paxRecord(key: string, value: string): string {
  const body = ` ${key}=${value}\n`;
  let len = body.length + 1;
  while (`${len}${body}`.length !== len) len++;
  return `${len}${body}`;
}

/** An uncompressed tar of `entries`. */
export function tarOf(entries: TarEntry[]): Uint8Array {
  const parts: Uint8Array[] = [];
  for (const e of entries) {
    if (e.pax) {
      const pax = bytes(Object.entries(e.pax).map(([k, v]) => paxRecord(k, v)).join(""));
      parts.push(header("PaxHeader", pax.byteLength, "x"), padded(pax));
    }
    const data = typeof e.content === "string" ? bytes(e.content) : (e.content ?? new Uint8Array(0));
    parts.push(header(e.name, data.byteLength, e.type ?? "0", e.linkTo), padded(data));
  }
  parts.push(new Uint8Array(1024));
  const out = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.byteLength;
  }
  return out;
}

export const tarGzOf = (entries: TarEntry[]) => gzipSync(tarOf(entries));
