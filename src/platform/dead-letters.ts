import { deadLetters } from "../db/schema/index.ts";
import { newId } from "./ids.ts";
import { log } from "./log.ts";
import { directoryDb } from "./shards.ts";

/** An area's say in a dead-lettered message: record its final state (e.g. a delivery becomes `failed`). */
export type DeadLetterOwner = (env: Env, body: unknown, now: number) => Promise<void>;

/**
 * Messages that exhausted their retries on any queue are recorded in D1 (not left to expire), so
 * nothing is silently lost and an operator can inspect or replay them. Each owner (wired in
 * src/queues.ts) then sees every message and acts on those of its own.
 */
export async function recordDeadLetters(batch: MessageBatch<unknown>, env: Env, owners: readonly DeadLetterOwner[]): Promise<void> {
  const db = directoryDb(env);
  const now = Date.now();
  for (const msg of batch.messages) {
    const body = JSON.stringify(msg.body);
    await db
      .insert(deadLetters)
      .values({ id: newId("dlq"), messageId: msg.id, queue: sourceQueue(msg.body), body: body.length > 100_000 ? body.slice(0, 100_000) : body, attempts: msg.attempts, createdAt: now })
      .onConflictDoNothing();
    for (const owner of owners) await owner(env, msg.body, now);
    log.error("dead letter", { messageId: msg.id });
    msg.ack();
  }
}

function sourceQueue(body: unknown): string | null {
  if (body && typeof body === "object" && "kind" in body && typeof (body as { kind: unknown }).kind === "string") return (body as { kind: string }).kind;
  return null;
}
