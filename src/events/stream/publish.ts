import { log } from "../../platform/log.ts";
import { envelopeOf, type StreamEvent } from "./stream-do.ts";

export interface CommittedEvent {
  id: string;
  accountId: string;
  type: string;
  sessionId: string | null;
  payload: string;
}

/**
 * Hands committed events to their accounts' stream objects: one RPC per account per batch, all
 * concurrently. Best effort: a failure is logged, never retried (webhooks are the at-least-once
 * channel; a client that missed events resumes with `?after=`).
 */
export async function publishToStreams(env: Env, committed: CommittedEvent[]): Promise<void> {
  const byAccount = new Map<string, StreamEvent[]>();
  for (const e of [...committed].sort((a, b) => (a.id < b.id ? -1 : 1))) {
    let list = byAccount.get(e.accountId);
    if (!list) byAccount.set(e.accountId, (list = []));
    list.push({ id: e.id, type: e.type, sessionId: e.sessionId, envelope: envelopeOf(e.id, e.payload) });
  }
  await Promise.all(
    [...byAccount].map(async ([accountId, batch]) => {
      try {
        await env.EVENT_STREAMS.get(env.EVENT_STREAMS.idFromName(accountId)).publish(batch);
      } catch (err) {
        log.warn("event stream publish failed", { accountId, count: batch.length, error: String(err) });
      }
    }),
  );
}
