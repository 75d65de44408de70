import type { DomainEvent } from "../../src/events/types.ts";
import type { Consumer } from "../../src/queues.ts";

/**
 * Every event that went through EVENTS_QUEUE, recorded by the test Worker's events consumer (the
 * real consumer still runs). Queue messages carry the event id; the event is read from its D1 record.
 */
export const seenEvents: DomainEvent[] = [];

export function tapEvents(consumer: Consumer): Consumer {
  return async (batch, env, ctx) => {
    for (const m of batch.messages) {
      const body = m.body as { kind?: string; id?: string };
      if (body?.kind !== "event" || !body.id) continue;
      const row = await env.DB.prepare("SELECT id, account_id, session_id, payload FROM events WHERE id = ?").bind(body.id).first<{ id: string; account_id: string; session_id: string | null; payload: string }>();
      if (!row) continue;
      const payload = JSON.parse(row.payload) as { type: DomainEvent["type"]; timestamp: string; data: Record<string, unknown> };
      if (!seenEvents.some((e) => e.id === row.id)) seenEvents.push({ id: row.id, type: payload.type, accountId: row.account_id, sessionId: row.session_id, timestamp: payload.timestamp, data: payload.data });
    }
    await consumer(batch, env, ctx);
  };
}
