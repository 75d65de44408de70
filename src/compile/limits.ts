/**
 * Limits of the compile API, documented in the README ("Compile API") and in OpenAPI. The request
 * body itself is capped at 10 MiB for /v1/compile/* by src/platform/limits.ts; these are checked after
 * parsing and answer 413 `payload_too_large` naming the limit.
 */
export const COMPILE_LIMITS = {
  /** UTF-8 bytes of `source`. */
  maxSourceBytes: 2 * 1024 * 1024,
  /** Entries in `files`. */
  maxFiles: 100,
  /** Decoded bytes of `source` plus every file: 7 MiB leaves room for base64 inside the 10 MiB body. */
  maxTotalBytes: 7 * 1024 * 1024,
  /** Bytes of one compile asset: a whole project's, so any asset fits a request alone. */
  maxAssetBytes: 7 * 1024 * 1024,
  /** Characters of one file path. */
  maxPathLength: 400,
  /** `timeoutMs` bounds and default (time spent compiling, all passes). */
  minTimeoutMs: 1_000,
  maxTimeoutMs: 60_000,
  defaultTimeoutMs: 30_000,
  /** A PDF larger than this is a 422 `output_too_large` (sync responses are buffered in the Worker). */
  maxPdfBytes: 20 * 1024 * 1024,
} as const;

/** Compile attempts of one async job that end in an infrastructure failure before it is `failed`. */
export const MAX_JOB_ATTEMPTS = 3;
