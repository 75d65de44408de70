/**
 * Request body limits by route, documented in the README and OpenAPI. The first match wins; routes
 * not listed get DEFAULT_BODY_LIMIT.
 */
export const DEFAULT_BODY_LIMIT = 1024 * 1024; // 1 MiB

export const BODY_LIMITS: Array<{ pattern: RegExp; bytes: number }> = [
  // compile: source + files, base64 included (see src/compile/limits.ts)
  { pattern: /^\/v1\/compile\//, bytes: 10 * 1024 * 1024 },
  // media sends carry base64 files (16 MiB of media is ~21.4 MiB of base64)
  { pattern: /^\/api\/messages\/send-media$/, bytes: 22 * 1024 * 1024 },
  // bulk sends: up to 1,000+ items
  { pattern: /^\/api\/messages\/send-bulk$/, bytes: 5 * 1024 * 1024 },
  // contact imports: up to 1,000 contacts
  { pattern: /^\/api\/contacts\/import$/, bytes: 5 * 1024 * 1024 },
];

export function bodyLimitFor(path: string): number {
  return BODY_LIMITS.find((l) => l.pattern.test(path))?.bytes ?? DEFAULT_BODY_LIMIT;
}
