/** Queues accept at most this many messages in one `sendBatch`. */
export const QUEUE_BATCH_MAX = 100;

export function chunk<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/** Sends every message, in order, in as many `sendBatch` calls as the limit needs; stops at the first failure. */
export async function sendAll<T, M extends { body: T }>(queue: { sendBatch(messages: M[]): Promise<unknown> }, messages: M[]): Promise<void> {
  for (const part of chunk(messages, QUEUE_BATCH_MAX)) await queue.sendBatch(part);
}
