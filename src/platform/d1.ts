import { getTableColumns, sql, type SQL } from "drizzle-orm";
import type { SQLiteTable } from "drizzle-orm/sqlite-core";
/** D1 binds at most this many parameters in one statement. */
export const D1_MAX_PARAMS = 100;

/**
 * How many rows (or ids) one statement can carry when each binds `perItem` parameters and the
 * statement binds up to `others` more of its own. Every multi-row INSERT and `IN (...)` list sizes
 * its parts with this.
 */
export function itemsPerStatement(perItem: number, others = 0): number {
  return Math.floor((D1_MAX_PARAMS - others) / perItem);
}

/**
 * Bytes of JSON one statement binds as a single parameter. Multi-row writes that carry their rows
 * as one JSON array (`json_each(?)`) are bound by this instead of by the parameter count: far more
 * rows per statement, well under D1's 2 MB per value.
 */
export const JSON_PART_BYTES = 256 * 1024;

/**
 * `items` as JSON arrays of at most `maxBytes` each (an item over the bound goes alone), in order:
 * one per statement of a `json_each(?)` write.
 */
export function jsonParts(items: readonly unknown[], maxBytes = JSON_PART_BYTES): string[] {
  return jsonTextParts(items.map((item) => JSON.stringify(item)), maxBytes);
}

/** As `jsonParts`, for items already JSON text (kept as stored: no parse and no stringify again). */
export function jsonTextParts(texts: readonly string[], maxBytes = JSON_PART_BYTES): string[] {
  const out: string[] = [];
  let part: string[] = [];
  let bytes = 2;
  for (const text of texts) {
    // UTF-16 length * 3 bounds the UTF-8 size: no encoding needed to stay under the limit.
    const size = text.length * 3 + 1;
    if (part.length > 0 && bytes + size > maxBytes) {
      out.push(`[${part.join(",")}]`);
      part = [];
      bytes = 2;
    }
    part.push(text);
    bytes += size;
  }
  if (part.length > 0) out.push(`[${part.join(",")}]`);
  return out;
}

/**
 * A table's columns for `json_each` writes (`INSERT ... SELECT <extracts> FROM json_each(?) AS j`):
 * `rowJson` gives a row as a JSON object keyed by column name (missing fields null), `extracts` the
 * matching `json_extract(j.value, ...)` list in the table's column order (a missing field reads NULL).
 */
export function jsonColumns<T extends SQLiteTable>(table: T): { extracts: SQL; keyExtracts: SQL; rowJson(row: Partial<T["$inferInsert"]>): Record<string, unknown> } {
  const columns = Object.entries(getTableColumns(table)).map(([key, c]) => ({ key, name: c.name }));
  return {
    extracts: sql.raw(columns.map((c) => `json_extract(j.value, '$.${c.name}')`).join(", ")),
    // The same list for rows serialized as they are typed (keyed by property, e.g. `sentAt`): JSON a
    // writer kept as text goes to D1 as it is.
    keyExtracts: sql.raw(columns.map((c) => `json_extract(j.value, '$.${c.key}')`).join(", ")),
    rowJson: (row) => Object.fromEntries(columns.map((c) => [c.name, (row as Record<string, unknown>)[c.key] ?? null])),
  };
}
