import { z } from "@hono/zod-openapi";

const encoder = new TextEncoder();

/**
 * Whether `value` as JSON is at most `maxBytes` of UTF-8 and `maxDepth` levels deep. Walked without
 * recursion (a deeply nested body cannot overflow the stack) and given up as soon as the lower bound
 * of its size passes `maxBytes`; only a value already known to be small is serialised exactly.
 */
export function jsonWithin(value: unknown, maxBytes: number, maxDepth: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 1]];
  let estimate = 0;
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (v !== null && typeof v === "object") {
      if (depth > maxDepth) return false;
      const entries = Array.isArray(v) ? v.map((item) => ["", item] as const) : Object.entries(v);
      estimate += 2 + entries.length;
      for (const [k, item] of entries) {
        estimate += k.length ? k.length + 3 : 0;
        stack.push([item, depth + 1]);
      }
    } else {
      estimate += typeof v === "string" ? v.length + 2 : 4;
    }
    if (estimate > maxBytes) return false;
  }
  return encoder.encode(JSON.stringify(value)).byteLength <= maxBytes;
}

/** A refinement for object or array fields that end up in stored rows and events. */
export function boundedJson<T extends z.ZodType>(schema: T, maxBytes: number, maxDepth: number) {
  return schema.refine((v) => jsonWithin(v, maxBytes, maxDepth), {
    message: `must be at most ${maxBytes} bytes as JSON, nested at most ${maxDepth} levels`,
    abort: true,
  });
}
