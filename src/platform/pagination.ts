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

/** The cursor of lists ordered by id (most of them). */
export const IdCursor = z.strictObject({ id: z.string().min(1).max(64) });
/** The cursor of lists ordered by a position number (campaign recipients). */
export const SeqCursor = z.strictObject({ seq: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER) });

/**
 * Decodes a client's cursor and checks it against the list's own cursor schema, so a cursor of the
 * wrong shape (`{"id":{}}`, `{"id":[]}`) is a 400 `invalid_cursor`, never a query with garbage in it.
 */
export function decodeCursor<S extends z.ZodType<Record<string, string | number>>>(cursor: string | undefined, schema: S): z.infer<S> | undefined {
  if (!cursor) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(atob(cursor.replace(/-/g, "+").replace(/_/g, "/")));
  } catch {
    throw errors.invalidCursor();
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw errors.invalidCursor();
  return parsed.data;
}

/** Fetch limit + 1 rows, then cut: tells whether there is a next page without a count query. */
/** One page of a list, as every list endpoint answers it. */
export interface Page<T> {
  data: T[];
  nextCursor: string | null;
}

export function toPage<T>(rows: T[], limit: number, cursorOf: (last: T) => Record<string, string | number>): Page<T> {
  const hasMore = rows.length > limit;
  const data = hasMore ? rows.slice(0, limit) : rows;
  return { data, nextCursor: hasMore && data.length > 0 ? encodeCursor(cursorOf(data[data.length - 1]!)) : null };
}
