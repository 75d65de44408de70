import { and, eq, inArray } from "drizzle-orm";
import { messagingSessions } from "../../db/schema/index.ts";
import { emit } from "../../events/emit.ts";
import { chunk } from "../../platform/batching.ts";
import { itemsPerStatement } from "../../platform/d1.ts";
import { toSession, type SessionRow } from "./mapper.ts";
import type { Network, SessionHealth, SessionStatus } from "./schemas.ts";
import { accountShard } from "../../platform/shards.ts";
import { sequencedOne } from "../session-sequence.ts";
import type { SendLimitsInput } from "../send-limits.ts";

/** Phone numbers per `IN (...)` list, with room for the statement's own parameters. */
const NUMBERS_PER_QUERY = itemsPerStatement(1, 20);

/**
 * Writes a session's new state to D1 (the queryable mirror) and emits `session.connected` when it
 * enters WORKING, `session.disconnected` when it leaves it.
 */
export async function writeSessionStatus(
  env: Env,
  accountId: string,
  sessionId: string,
  previous: SessionStatus,
  next: SessionStatus,
  reason: string | null,
  extra: { phoneNumber?: string; credentialsSet?: boolean } = {},
): Promise<SessionRow | undefined> {
  const [row] = await (await accountShard(env, accountId)).db
    .update(messagingSessions)
    .set({ status: next, statusReason: reason, updatedAt: Date.now(), ...extra })
    .where(and(eq(messagingSessions.accountId, accountId), eq(messagingSessions.id, sessionId)))
    .returning();
  if (!row) return undefined;
  if (next === "WORKING" && previous !== "WORKING") await emit(env, await sequencedOne(env, { type: "session.connected", accountId, sessionId, data: toSession(row) }));
  if (previous === "WORKING" && next !== "WORKING") await emit(env, await sequencedOne(env, { type: "session.disconnected", accountId, sessionId, data: toSession(row) }));
  return row;
}

/**
 * Records the business account's standing on the session; `session.restricted` when it moves to a
 * state that limits sending (restricted, ban scheduled, banned, a violation), with the session as data;
 * `session.updated` when it is back to `ok` (so a view of the session drops its warning).
 */
export async function writeSessionHealth(env: Env, accountId: string, sessionId: string, health: SessionHealth): Promise<void> {
  const [row] = await (await accountShard(env, accountId)).db
    .update(messagingSessions)
    .set({ health: JSON.stringify(health), updatedAt: Date.now() })
    .where(and(eq(messagingSessions.accountId, accountId), eq(messagingSessions.id, sessionId)))
    .returning();
  if (row) await emit(env, await sequencedOne(env, { type: health.state === "ok" ? "session.updated" : "session.restricted", accountId, sessionId, data: toSession(row) }));
}

/** Records a session's new limits (its own settings, merged by its object) and emits `session.updated`. */
export async function writeSessionLimits(env: Env, accountId: string, sessionId: string, limits: SendLimitsInput): Promise<SessionRow | undefined> {
  const [row] = await (await accountShard(env, accountId)).db
    .update(messagingSessions)
    .set({ limits: JSON.stringify(limits), updatedAt: Date.now() })
    .where(and(eq(messagingSessions.accountId, accountId), eq(messagingSessions.id, sessionId)))
    .returning();
  if (row) await emit(env, await sequencedOne(env, { type: "session.updated", accountId, sessionId, data: toSession(row) }));
  return row;
}

/** This account's WORKING sessions on `network` among those with the given phone numbers: number -> session id. */
export async function workingSessionsByNumber(env: Env, accountId: string, network: Network, numbers: string[]): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  for (const part of chunk(numbers, NUMBERS_PER_QUERY)) {
    const rows = await (await accountShard(env, accountId)).db
      .select({ id: messagingSessions.id, phoneNumber: messagingSessions.phoneNumber })
      .from(messagingSessions)
      .where(and(eq(messagingSessions.accountId, accountId), eq(messagingSessions.network, network), eq(messagingSessions.status, "WORKING"), inArray(messagingSessions.phoneNumber, part)))
      .all();
    for (const r of rows) if (r.phoneNumber) found.set(r.phoneNumber, r.id);
  }
  return found;
}
