import { api, type TestKey } from "../helpers.ts";
import type { Envelope } from "./stream.support.ts";

export interface PollAnswer {
  data: Envelope[];
  next: string;
  hasMore: boolean;
}

/** GET /api/events/poll with `query`; throws unless 200. */
export async function poll(key: TestKey | string, query = ""): Promise<PollAnswer> {
  const res = await api(`/api/events/poll${query}`, { key: typeof key === "string" ? key : key.key });
  if (res.status !== 200) throw new Error(`poll: ${res.status} ${await res.text()}`);
  return (await res.json()) as PollAnswer;
}

/** Polls (long-polling) from `after` until `n` events have come; answers them and the last cursor. */
export async function pollUntil(key: TestKey, after: string, n: number, extra = "", timeoutMs = 20_000): Promise<{ events: Envelope[]; next: string }> {
  const deadline = Date.now() + timeoutMs;
  const got: Envelope[] = [];
  let cursor = after;
  while (got.length < n) {
    if (Date.now() > deadline) throw new Error(`only ${got.length} of ${n} events polled`);
    const page = await poll(key, `?after=${cursor}&wait=5${extra}`);
    got.push(...page.data);
    cursor = page.next;
  }
  return { events: got, next: cursor };
}

/** Events of one emit share a millisecond, so their ids (time, then random) order them at random: as the log does, by id. */
export const byId = <T extends { id: string }>(list: T[]): T[] => [...list].sort((x, y) => (x.id < y.id ? -1 : 1));
