/**
 * Request body limits by route, documented in the README and OpenAPI. The first match wins; routes
 * not listed get DEFAULT_BODY_LIMIT.
 */
export const DEFAULT_BODY_LIMIT = 1024 * 1024; // 1 MiB

export const BODY_LIMITS: Array<{ pattern: RegExp; bytes: number }> = [
  // compile: source + files, base64 included (see src/compile/limits.ts)
  { pattern: /^\/v1\/compile\//, bytes: 10 * 1024 * 1024 },
  // a compile asset: one file's bytes, at most what a whole project may hold (src/compile/limits.ts)
  { pattern: /^\/v1\/assets\/[^/]+$/, bytes: 7 * 1024 * 1024 },
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

/** Content types of a project archive (the bytes themselves say zip or gzip): src/compile/archive/request.ts. */
export const ARCHIVE_TYPE = /^(application\/(zip|x-zip-compressed|gzip|x-gzip|x-tar|x-gtar)|multipart\/form-data)\s*(;|$)/i;

/** Routes that take a body other than JSON, and which types; the route turns it into JSON itself. */
const OTHER_BODY_TYPES: Array<{ pattern: RegExp; type: RegExp }> = [
  { pattern: /^\/v1\/compile\/(sync|async)$/, type: ARCHIVE_TYPE },
  // an asset's body is the file itself, whatever its type (curl --data-binary sends a form type)
  { pattern: /^\/v1\/assets\/[^/]+$/, type: /^/ },
];

export function takesBodyType(path: string, contentType: string): boolean {
  return OTHER_BODY_TYPES.some((o) => o.pattern.test(path) && o.type.test(contentType));
}
