import { and, asc, eq, gt, inArray, lt, ne } from "drizzle-orm";
import { events } from "../../db/schema/index.ts";
import { TEST_EVENT_TYPE } from "../types.ts";
import { accountShard } from "../../platform/shards.ts";

/** What a socket or a poll asked for; kept on the socket (`serializeAttachment`) so it survives hibernation. */
export interface StreamFilter {
  /** Event types to send; null = all. */
  types: string[] | null;
  /** Only events of this messaging session; null = all. */
  sessionId: string | null;
}

/**
 * The account's events after the cursor `after` (an event id; ids are time-ordered), oldest first,
 * as the stream's replay and the poll read them: filtered like a socket, never a `webhook.test`
 * (those are not published), at most `limit`, and, with `before`, only ids below it. An index range
 * on (account, id) or (account, type, id) / (account, session, id), in the account's shard.
 */
export async function eventsAfter(env: Env, accountId: string, after: string, f: StreamFilter, limit: number, before?: string): Promise<{ id: string; payload: string }[]> {
  const conds = [eq(events.accountId, accountId), gt(events.id, after), ne(events.type, TEST_EVENT_TYPE)];
  if (before !== undefined) conds.push(lt(events.id, before));
  if (f.types) conds.push(inArray(events.type, f.types));
  if (f.sessionId) conds.push(eq(events.sessionId, f.sessionId));
  return (await accountShard(env, accountId)).db.select({ id: events.id, payload: events.payload }).from(events).where(and(...conds)).orderBy(asc(events.id)).limit(limit);
}

/** The cursor of an instant: below every event id minted at or after it, above every earlier one. */
export function cursorAt(ms: number): string {
  return `evt_${Math.max(0, Math.floor(ms)).toString(36).padStart(9, "0")}${"0".repeat(12)}`;
}
