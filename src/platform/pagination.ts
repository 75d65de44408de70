import { z } from "@hono/zod-openapi";
import { errors } from "./errors.ts";

/** `?limit=&cursor=` of every list endpoint (docs/contracts.md §2). */
export const PaginationQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(20).openapi({ description: "Items per page (1-100).", example: 20 }),
  cursor: z.string().max(512).optional().openapi({ description: "`nextCursor` of the previous page." }),
});

export function pageOf<T extends z.ZodTypeAny>(item: T, name: string) {
  return z
    .object({ data: z.array(item), nextCursor: z.string().nullable().openapi({ description: "Pass as `cursor` for the next page; null on the last page." }) })
    .openapi(name);
}

/**
 * Keyset cursors: opaque base64url JSON of the sort key of the last item. Ids are time-ordered
 * (platform/ids.ts), so most lists page by id alone.
 */
export function encodeCursor(value: Record<string, string | number>): string {
  return btoa(JSON.stringify(value)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

export function decodeCursor<T extends Record<string, string | number>>(cursor: string | undefined, keys: (keyof T)[]): T | undefined {
  if (!cursor) return undefined;
  try {
    const json = atob(cursor.replace(/-/g, "+").replace(/_/g, "/"));
    const value = JSON.parse(json) as T;
    if (typeof value !== "object" || value === null || keys.some((k) => !(k in value))) throw new Error("shape");
    return value;
  } catch {
    throw errors.invalidRequest("The cursor is not valid: pass `nextCursor` from the previous page unchanged.", [{ path: "cursor", message: "invalid cursor" }]);
  }
}

/** Fetch limit + 1 rows, then cut: tells whether there is a next page without a count query. */
export function toPage<T>(rows: T[], limit: number, cursorOf: (last: T) => Record<string, string | number>): { data: T[]; nextCursor: string | null } {
  const hasMore = rows.length > limit;
  const data = hasMore ? rows.slice(0, limit) : rows;
  return { data, nextCursor: hasMore && data.length > 0 ? encodeCursor(cursorOf(data[data.length - 1]!)) : null };
}
