/**
 * User files (messaging media, compiled PDFs) are served from the API's own origin, so a file a
 * browser would run (HTML, SVG, JavaScript, XML) would run with that origin. Whatever a sender's
 * server claims, a file is served with a type from a short allow-list, and only when its first
 * bytes are that type's (magic numbers); anything else is `application/octet-stream`, downloaded
 * (`attachment`). Every such response also carries INERT_HEADERS. Pure: no I/O, no bindings.
 */

/** On every response whose body a user chose: never sniffed into something else, never scripted. */
export const INERT_HEADERS: Readonly<Record<string, string>> = {
  "X-Content-Type-Options": "nosniff",
  "Content-Security-Policy": "sandbox; default-src 'none'",
};

/** How many leading bytes `sniff` needs to recognise every allowed type. */
export const SNIFF_BYTES = 16;

export const OCTET_STREAM = "application/octet-stream";

/** What the bytes are: the type to serve when the declared one is not among `accepts`. */
interface Sniffed {
  type: string;
  /** Declared types these bytes may also be served as (the same container, another label). */
  accepts: readonly string[];
}

const MP4_FAMILY = ["video/mp4", "audio/mp4", "video/3gpp", "audio/3gpp", "audio/aac"];
const ZIP_OFFICE = [
  "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
  "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
  "application/vnd.openxmlformats-officedocument.presentationml.presentation",
];
const OLE_OFFICE = ["application/msword", "application/vnd.ms-excel", "application/vnd.ms-powerpoint"];
/** Plain text has no magic number; with nosniff, the sandbox and `attachment` no browser renders it. */
const PLAIN_TEXT = ["text/plain", "text/csv"];

const startsWith = (b: Uint8Array, sig: readonly number[], at = 0) => b.length >= at + sig.length && sig.every((x, i) => b[at + i] === x);
const ascii = (s: string) => [...s].map((c) => c.charCodeAt(0));

/** The allowed type the bytes start with, or null. Reads at most SNIFF_BYTES bytes. */
export function sniff(head: Uint8Array): Sniffed | null {
  const one = (type: string): Sniffed => ({ type, accepts: [type] });
  if (startsWith(head, [0xff, 0xd8, 0xff])) return one("image/jpeg");
  if (startsWith(head, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return one("image/png");
  if (startsWith(head, ascii("GIF87a")) || startsWith(head, ascii("GIF89a"))) return one("image/gif");
  if (startsWith(head, ascii("RIFF")) && startsWith(head, ascii("WEBP"), 8)) return one("image/webp");
  if (startsWith(head, ascii("%PDF-"))) return one("application/pdf");
  if (startsWith(head, ascii("OggS"))) return { type: "audio/ogg", accepts: ["audio/ogg", "audio/opus"] };
  if (startsWith(head, ascii("#!AMR"))) return one("audio/amr");
  if (startsWith(head, ascii("ID3"))) return one("audio/mpeg");
  if (startsWith(head, ascii("ftyp"), 4)) {
    const brand = String.fromCharCode(...head.subarray(8, 12));
    if (brand.startsWith("3gp") || brand.startsWith("3g2")) return { type: "video/3gpp", accepts: MP4_FAMILY };
    if (brand === "M4A " || brand === "M4B ") return { type: "audio/mp4", accepts: MP4_FAMILY };
    return { type: "video/mp4", accepts: MP4_FAMILY };
  }
  if (head.length >= 2 && head[0] === 0xff && (head[1]! & 0xe0) === 0xe0) {
    // MPEG audio frame sync: layer bits 00 are AAC's ADTS header, any other layer is MP3.
    return (head[1]! & 0x06) === 0 ? { type: "audio/aac", accepts: ["audio/aac", "audio/mp4"] } : one("audio/mpeg");
  }
  if (startsWith(head, [0x50, 0x4b, 0x03, 0x04])) return { type: OCTET_STREAM, accepts: ZIP_OFFICE };
  if (startsWith(head, [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1])) return { type: OCTET_STREAM, accepts: OLE_OFFICE };
  return null;
}

/** `image/JPEG; charset=x` -> `image/jpeg`; null for nothing. Bounded: a header is short, but be sure. */
export function normalizeType(declared: string | null | undefined): string | null {
  if (!declared) return null;
  const bare = declared.slice(0, 200).split(";")[0]!.trim().toLowerCase();
  return bare || null;
}

/** Types a browser may show in place (never a document format: PDF viewers run scripts). */
const INLINE = /^(image|audio|video)\//;

export interface ServedType {
  contentType: string;
  /** Shown in place, or downloaded (`Content-Disposition: attachment`). */
  inline: boolean;
}

/**
 * The type to serve a file as, from what its sender declared and its first bytes: the declared
 * type when the bytes are of it (or of its container), else the type the bytes are, else
 * `application/octet-stream`. Declared plain text is kept (as a download).
 */
export function servedType(declared: string | null | undefined, head: Uint8Array): ServedType {
  const want = normalizeType(declared);
  const found = sniff(head.subarray(0, SNIFF_BYTES));
  let contentType = OCTET_STREAM;
  if (found) contentType = want && found.accepts.includes(want) ? want : found.type;
  else if (want && PLAIN_TEXT.includes(want)) contentType = want;
  return { contentType, inline: INLINE.test(contentType) };
}

/** Whether stored metadata names a type this module could have chosen (a guard on what R2 says). */
export function isServedType(type: string | null | undefined): boolean {
  const t = normalizeType(type);
  if (!t) return false;
  if (t === OCTET_STREAM || PLAIN_TEXT.includes(t) || ZIP_OFFICE.includes(t) || OLE_OFFICE.includes(t)) return true;
  return ["image/jpeg", "image/png", "image/gif", "image/webp", "application/pdf", "audio/ogg", "audio/opus", "audio/amr", "audio/mpeg", ...MP4_FAMILY].includes(t);
}

/** A filename safe in a quoted header value: ASCII letters, digits, `._- `; at most 100 characters. */
export function safeFilename(name: string | null | undefined, fallback: string): string {
  const cleaned = (name ?? "")
    .slice(0, 100)
    .replace(/[^A-Za-z0-9._ -]/g, "_")
    .replace(/^[. ]+/, "");
  return cleaned || fallback;
}

/** `Content-Disposition` of a served file: downloads always name a file. */
export function contentDisposition(served: ServedType, filename: string | null | undefined, fallback: string): string {
  if (served.inline) return filename ? `inline; filename="${safeFilename(filename, fallback)}"` : "inline";
  return `attachment; filename="${safeFilename(filename, fallback)}"`;
}

/** Every header a served user file needs: its type, disposition and INERT_HEADERS. */
export function inertFileHeaders(served: ServedType, filename: string | null | undefined, fallback: string): Record<string, string> {
  return { "Content-Type": served.contentType, "Content-Disposition": contentDisposition(served, filename, fallback), ...INERT_HEADERS };
}
