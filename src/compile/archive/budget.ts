import { ApiError, errors } from "../../platform/errors.ts";
import { COMPILE_LIMITS as L } from "../limits.ts";

/** One file of an unpacked archive, by its path inside the archive (not yet checked). */
export type ArchiveEntry = { name: string; bytes: Uint8Array };

/**
 * Limits of an archive, the same as a JSON request's `files` (the main file is one of the entries),
 * plus what only an archive needs: a cap on entries of any kind (folders too) so that no archive
 * costs more work than its bytes, and a compression ratio past which inflating stops (a zip bomb
 * stops at the total cap anyway; the ratio refuses it after 1 MiB instead of 7).
 */
export const ARCHIVE_LIMITS = {
  maxFiles: L.maxFiles + 1,
  maxEntries: 4 * (L.maxFiles + 1),
  maxTotalBytes: L.maxTotalBytes,
  maxRatio: 100,
  ratioFloorBytes: 1024 * 1024,
  /** A pax or GNU long-name header's size. */
  maxMetaBytes: 64 * 1024,
} as const;

export function tooLarge(limit: string, message: string, limitValue: number): ApiError {
  return new ApiError(413, "payload_too_large", message, { limit, limitValue });
}

/** A 400 for an archive that cannot be read or holds what a project may not. */
export const badArchive = (message: string) => errors.invalidRequest(`The archive ${message}`, [{ path: "archive", message }]);

/** Names in messages are cut short: an entry's name is user text of any length. */
export const shown = (name: string) => JSON.stringify(name.length > 120 ? `${name.slice(0, 120)}…` : name);

/**
 * Counts what unpacking produces, throwing the moment a limit is passed, so no more than the limit
 * is ever inflated or kept.
 */
export class Budget {
  private contentBytes = 0;
  private inflatedBytes = 0;
  private files = 0;
  private entries = 0;
  private readonly compressedBytes: number;
  // a plain field, not a parameter property: Node runs this file as it is (bench/compile-server)
  constructor(compressedBytes: number) {
    this.compressedBytes = compressedBytes;
  }

  entry(): void {
    if (++this.entries > ARCHIVE_LIMITS.maxEntries) throw tooLarge("files", `The archive has more than ${ARCHIVE_LIMITS.maxEntries} entries.`, L.maxFiles);
  }

  file(): void {
    if (++this.files > ARCHIVE_LIMITS.maxFiles) throw tooLarge("files", `The archive has more than ${ARCHIVE_LIMITS.maxFiles} files (the main file and ${L.maxFiles} others).`, L.maxFiles);
  }

  /** Bytes of file content, held to the total limit. */
  content(n: number): void {
    this.contentBytes += n;
    const max = ARCHIVE_LIMITS.maxTotalBytes;
    if (this.contentBytes > max) throw tooLarge("totalBytes", `The archive holds more than ${max} bytes of files uncompressed.`, max);
  }

  /** Bytes a decompressor produced: held to the ratio, and (a tar's headers and padding on top) to the total. */
  inflated(n: number): void {
    this.inflatedBytes += n;
    const { maxTotalBytes: max, maxRatio, ratioFloorBytes, maxEntries } = ARCHIVE_LIMITS;
    if (this.inflatedBytes > max + 2 * 512 * maxEntries) throw tooLarge("totalBytes", `The archive holds more than ${max} bytes uncompressed.`, max);
    if (this.inflatedBytes > ratioFloorBytes && this.inflatedBytes > maxRatio * this.compressedBytes)
      throw tooLarge("compressionRatio", `The archive inflates to more than ${maxRatio} times its size.`, maxRatio);
  }
}

/**
 * Feeds `data` to a streaming decompressor in slices, so that a limit thrown by its output stops it
 * early: deflate inflates at most ~1,032 times, so a 1 KiB slice makes at most about 1 MiB at once.
 */
export function pushInSlices(data: Uint8Array, push: (chunk: Uint8Array, final: boolean) => void): void {
  const SLICE = 1024;
  if (data.byteLength === 0) push(data, true);
  for (let i = 0; i < data.byteLength; i += SLICE) push(data.subarray(i, i + SLICE), i + SLICE >= data.byteLength);
}

export function concat(chunks: Uint8Array[], size: number): Uint8Array {
  if (chunks.length === 1) return chunks[0]!;
  const out = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return out;
}
