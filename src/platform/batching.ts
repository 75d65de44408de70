/** Queues accept at most this many messages in one `sendBatch`. */
export const QUEUE_BATCH_MAX = 100;

/**
 * `rows` sorted (in place) into the order of `keys`, each row placed by `keyOf` (every row's key is
 * among `keys`): for rows a look-up by an IN list answered in its own order.
 */
export function inKeyOrder<T>(rows: T[], keys: readonly string[], keyOf: (row: T) => string): T[] {
  const rank = new Map(keys.map((k, i) => [k, i]));
  return rows.sort((a, b) => rank.get(keyOf(a))! - rank.get(keyOf(b))!);
}

export function chunk<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/** Sends every message, in order, in as many `sendBatch` calls as the limit needs; stops at the first failure. */
export async function sendAll<T, M extends { body: T }>(queue: { sendBatch(messages: M[]): Promise<unknown> }, messages: M[]): Promise<void> {
  for (const part of chunk(messages, QUEUE_BATCH_MAX)) await queue.sendBatch(part);
}
