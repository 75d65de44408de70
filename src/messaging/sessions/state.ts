import { and, eq } from "drizzle-orm";
import { getDb } from "../../db/client.ts";
import { messagingSessions } from "../../db/schema/index.ts";
import { emit } from "../../events/emit.ts";
import { toSession, type SessionRow } from "./mapper.ts";
import type { SessionStatus } from "./schemas.ts";

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
  const [row] = await getDb(env.DB)
    .update(messagingSessions)
    .set({ status: next, statusReason: reason, updatedAt: Date.now(), ...extra })
    .where(and(eq(messagingSessions.accountId, accountId), eq(messagingSessions.id, sessionId)))
    .returning();
  if (!row) return undefined;
  if (next === "WORKING" && previous !== "WORKING") await emit(env, { type: "session.connected", accountId, sessionId, data: toSession(row) });
  if (previous === "WORKING" && next !== "WORKING") await emit(env, { type: "session.disconnected", accountId, sessionId, data: toSession(row) });
  return row;
}
