import { api, type TestKey } from "../helpers.ts";

export interface LoggedEvent {
  id: string;
  type: string;
  sessionId: string | null;
  createdAt: string;
  payload: { type: string; timestamp: string; data: Record<string, unknown> };
  deliveries: { id: string; webhookId: string; status: string; attemptCount: number; lastStatusCode: number | null }[];
}

export async function listEvents(key: TestKey, query = ""): Promise<{ data: LoggedEvent[]; nextCursor: string | null }> {
  const res = await api(`/api/events${query ? `?${query}` : ""}`, { key: key.key });
  if (res.status !== 200) throw new Error(`GET /api/events?${query}: ${res.status} ${await res.text()}`);
  return (await res.json()) as { data: LoggedEvent[]; nextCursor: string | null };
}

/** Every page of a query, following `nextCursor`. */
export async function allEvents(key: TestKey, query: string): Promise<LoggedEvent[]> {
  const out: LoggedEvent[] = [];
  let cursor: string | null = null;
  do {
    const page = await listEvents(key, `${query}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`);
    out.push(...page.data);
    cursor = page.nextCursor;
  } while (cursor);
  return out;
}

export const ids = (list: { id: string }[]) => list.map((e) => e.id);
