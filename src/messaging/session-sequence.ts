import type { EmitInput } from "../events/event-record.ts";

/** What this file needs of the Session DO (sessions/session-do.ts `sequences`), without importing it (a lower layer may call this). */
interface SequenceSource {
  sequences(n: number): Promise<number>;
}

/**
 * Every event of a session carries the session's `sequence`, strictly increasing across all its
 * events: the Session DO's write buffer keeps the counter (sessions/write-buffer.ts) and numbers the
 * events it records itself; events recorded elsewhere (session state, inbound messages, contacts,
 * edits, media, campaigns) take their numbers from it here, one call per session, before they are
 * built. A number taken for an event that is then not written (a deduplicated write) is a gap, never
 * a repeat. Inputs without a session, or already numbered, are returned as they are.
 */
export async function sequenced<T extends EmitInput>(env: Env, inputs: T[], here?: { sessionId: string; take(n: number): number }): Promise<T[]> {
  const bySession = new Map<string, number[]>();
  inputs.forEach((input, i) => {
    if (!input.sessionId || input.order?.sequence !== undefined) return;
    bySession.set(input.sessionId, [...(bySession.get(input.sessionId) ?? []), i]);
  });
  const out = [...inputs];
  await Promise.all(
    [...bySession].map(async ([sessionId, indexes]) => {
      // Inside the session's own object its counter is taken directly, not by a call to itself.
      const first = here?.sessionId === sessionId ? here.take(indexes.length) : await (env.SESSIONS.getByName(sessionId) as unknown as SequenceSource).sequences(indexes.length);
      indexes.forEach((i, k) => (out[i] = { ...out[i]!, order: { ...out[i]!.order, sequence: first + k } }));
    }),
  );
  return out;
}

/** `sequenced` for one input. */
export async function sequencedOne<T extends EmitInput>(env: Env, input: T): Promise<T> {
  return (await sequenced(env, [input]))[0]!;
}
