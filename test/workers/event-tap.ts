import { envelopeOf, eventCatalog } from "../../src/events/index.ts";
import type { DomainEvent } from "../../src/events/types.ts";
import { MESSAGING_EVENT_TYPES } from "../../src/messaging/event-catalog.ts";
import type { Consumer } from "../../src/queues.ts";
import { carriedShard, shardAt } from "../../src/platform/shards.ts";
import { observeFanOutNow } from "../../src/events/fan-out-now.ts";

const envelopes = new Map(eventCatalog(MESSAGING_EVENT_TYPES).map((e) => [e.type as string, envelopeOf(e)]));

/**
 * Events whose delivery body does not match the catalog's schema for its type (GET /api/event-types):
 * every test file fails at its end when one of its events is here (test/workers/setup.ts).
 */
/** Events a test emitted itself with made-up data (webhooks/support.ts emitEvent): not checked. */
export const syntheticEventIds = new Set<string>();

export const invalidEvents: Array<{ id: string; type: string; accountId: string; issues: string }> = [];

/**
 * Every event that went through EVENTS_QUEUE, recorded by the test Worker's events consumer (the
 * real consumer still runs), and every event a session fanned out itself (`tapFanOutNow`). Each is
 * read from its D1 record.
 */
export const seenEvents: DomainEvent[] = [];

/** Events named by a message on EVENTS_QUEUE (those a session fanned out itself are not). */
export const queuedEventIds = new Set<string>();

/** Events whose queue message carried their record (the fan-out then reads none back from D1). */
export const carriedEventIds = new Set<string>();

/** Records one event read from its D1 row, after checking its body against the catalog. */
async function see(d1: D1Database, id: string): Promise<void> {
  const row = await d1.prepare("SELECT id, account_id, session_id, payload FROM events WHERE id = ?").bind(id).first<{ id: string; account_id: string; session_id: string | null; payload: string }>();
  if (!row) return;
  const payload = JSON.parse(row.payload) as { type: DomainEvent["type"]; timestamp: string; data: Record<string, unknown> };
  const checked = envelopes.get(payload.type)?.safeParse(payload);
  if (!checked?.success && !invalidEvents.some((e) => e.id === row.id)) {
    invalidEvents.push({ id: row.id, type: payload.type, accountId: row.account_id, issues: checked ? JSON.stringify(checked.error.issues).slice(0, 2000) : "not in the catalog" });
  }
  if (!seenEvents.some((e) => e.id === row.id)) seenEvents.push({ id: row.id, type: payload.type, accountId: row.account_id, sessionId: row.session_id, timestamp: payload.timestamp, data: payload.data });
}

/** The events a session fans out itself, without the queue (events/fan-out-now.ts): seen as the queue's are. */
export function tapFanOutNow(): void {
  observeFanOutNow(async (shard, records) => {
    for (const r of records) {
      carriedEventIds.add(r.id);
      await see(shard.d1, r.id);
    }
  });
}

export function tapEvents(consumer: Consumer): Consumer {
  return async (batch, env, ctx) => {
    for (const m of batch.messages) {
      const body = m.body as { kind?: string; id?: string; ids?: string[]; shard?: number; event?: { id?: string }; carried?: { id?: string }[] };
      // One event per message, or a group of a session's events.
      const named = body?.kind === "event" && body.id ? [body.id] : body?.kind === "events" && Array.isArray(body.ids) ? body.ids : [];
      if (body?.kind === "event" && body.event?.id === body.id && body.id) carriedEventIds.add(body.id);
      for (const r of body?.kind === "events" && Array.isArray(body.carried) ? body.carried : []) if (r.id) carriedEventIds.add(r.id);
      // Read from the shard the message names, as the real consumer does.
      for (const id of named) queuedEventIds.add(id);
      for (const id of named) await see(shardAt(env, carriedShard(body.shard)).d1, id);
    }
    await consumer(batch, env, ctx);
  };
}
