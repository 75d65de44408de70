import { newId } from "../platform/ids.ts";
import type { DomainEvent, EventType } from "./types.ts";

export interface EmitInput {
  type: EventType;
  accountId: string;
  sessionId?: string | null;
  data: Record<string, unknown>;
}

/**
 * The one way to publish a domain event. Awaited by the caller: when it resolves the event is
 * safely queued, so a request never answers before its events are recorded.
 */
export async function emit(env: Env, input: EmitInput | EmitInput[]): Promise<DomainEvent[]> {
  const inputs = Array.isArray(input) ? input : [input];
  if (inputs.length === 0) return [];
  const events: DomainEvent[] = inputs.map((i) => ({
    id: newId("evt"),
    type: i.type,
    accountId: i.accountId,
    sessionId: i.sessionId ?? null,
    timestamp: new Date().toISOString(),
    data: i.data,
  }));
  // sendBatch takes at most 100 messages.
  for (let i = 0; i < events.length; i += 100) {
    await env.EVENTS_QUEUE.sendBatch(events.slice(i, i + 100).map((body) => ({ body, contentType: "json" as const })));
  }
  return events;
}
