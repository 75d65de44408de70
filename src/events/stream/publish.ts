import { log } from "../../platform/log.ts";
import { envelopeOf } from "./stream-do.ts";

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
  const byAccount = new Map<string, CommittedEvent[]>();
  for (const e of [...committed].sort((a, b) => (a.id < b.id ? -1 : 1))) {
    let list = byAccount.get(e.accountId);
    if (!list) byAccount.set(e.accountId, (list = []));
    list.push(e);
  }
  await Promise.all(
    [...byAccount].map(async ([accountId, events]) => {
      try {
        const stream = env.EVENT_STREAMS.get(env.EVENT_STREAMS.idFromName(accountId));
        // Most accounts have no stream open most of the time: a small question first, and the
        // envelopes (a copy of every payload) are built and sent only to an account that listens.
        if (!(await stream.listening())) return;
        await stream.publish(events.map((e) => ({ id: e.id, type: e.type, sessionId: e.sessionId, envelope: envelopeOf(e.id, e.payload) })));
      } catch (err) {
        log.warn("event stream publish failed", { accountId, count: events.length, error: String(err) });
      }
    }),
  );
}
