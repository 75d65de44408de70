import { prepareEventAfterChange, prepareEvents } from "../../events/emit.ts";
import { newId } from "../../platform/ids.ts";
import type { Shard } from "../../platform/shards.ts";
import type { Call } from "../calls.ts";
import { chatIdOf } from "../chat-id.ts";
import { needsFetch } from "../media/limits.ts";
import { toMessage, type MessageRow } from "../messages/mapper.ts";
import type { CallFromNetwork, EchoFromNetwork } from "../networks/driver.ts";
import { inboundRow } from "../store/rows.ts";
import { insertInboundStatement } from "../store/writes.ts";

/** What happens on the session's number outside this API: messages sent from the WhatsApp Business app, and calls. */

type Enqueue = (eventIds: string[]) => void;

/**
 * A message the business sent from the WhatsApp Business app on the session's number: recorded once
 * per network id as an outbound message, `sent`, with `source: business_app`, and `message.sent`. It
 * opens no customer-service window and counts as no unread message (it is outbound). Its file, if
 * any, is fetched as an inbound one's is (`fetch`). Answers the row, or null for a replay.
 */
export async function recordEcho(shard: Shard, accountId: string, sessionId: string, e: EchoFromNetwork, enqueue: Enqueue, fetch: (messageId: string) => Promise<void>): Promise<MessageRow | null> {
  const base = inboundRow(newId("msg"), accountId, sessionId, { ...e.body, externalId: e.externalId, from: e.to, timestamp: e.timestamp });
  const content = { ...(base.content ? JSON.parse(base.content) : {}), source: "business_app" };
  const row: MessageRow = { ...base, direction: "outbound", status: "sent", sentAt: e.timestamp, content: JSON.stringify(content) };
  const sent = prepareEventAfterChange(shard, { type: "message.sent", accountId, sessionId, data: toMessage(row) });
  const [inserted] = await shard.db.batch([insertInboundStatement(shard, row), sent.statement]);
  if (inserted.length === 0) return null;
  enqueue([sent.event.id]);
  if (e.body.media && needsFetch(e.body.media)) await fetch(row.id);
  return row;
}

const iso = (ms: number | undefined) => (ms === undefined ? null : new Date(ms).toISOString());

/** A call on the session's number: `call.started` (connect) or `call.ended` (terminate), recorded in the event log. */
export async function recordCall(env: Env, shard: Shard, accountId: string, sessionId: string, c: CallFromNetwork, enqueue: Enqueue): Promise<Call> {
  const call: Call = {
    id: c.id,
    sessionId,
    chatId: chatIdOf(c.peer),
    direction: c.direction,
    event: c.event,
    status: c.status ?? null,
    startedAt: iso(c.startedAt),
    endedAt: iso(c.endedAt),
    durationSeconds: c.durationSeconds ?? null,
    at: new Date(c.at).toISOString(),
  };
  const prepared = prepareEvents(env, shard, { type: c.event === "connect" ? "call.started" : "call.ended", accountId, sessionId, data: call });
  await shard.db.batch(prepared.statements as [(typeof prepared.statements)[number], ...(typeof prepared.statements)[number][]]);
  enqueue(prepared.events.map((e) => e.id));
  return call;
}
