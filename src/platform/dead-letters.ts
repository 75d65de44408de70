import { getDb } from "../db/client.ts";
import { deadLetters } from "../db/schema/index.ts";
import { onEventsDeadLetter } from "../events/dead-letters.ts";
import { newId } from "./ids.ts";
import { log } from "./log.ts";

/**
 * Messages that exhausted their retries on any queue are recorded in D1 (not left to expire), so
 * nothing is silently lost and an operator can inspect or replay them.
 */
export async function handleDeadLetters(batch: MessageBatch<unknown>, env: Env): Promise<void> {
  const db = getDb(env.DB);
  const now = Date.now();
  for (const msg of batch.messages) {
    const body = JSON.stringify(msg.body);
    await db
      .insert(deadLetters)
      .values({ id: newId("dlq"), messageId: msg.id, queue: sourceQueue(msg.body), body: body.length > 100_000 ? body.slice(0, 100_000) : body, attempts: msg.attempts, createdAt: now })
      .onConflictDoNothing();
    // Let the owning area record the final state (e.g. a webhook delivery becomes `failed`).
    await onEventsDeadLetter(env, msg.body, now);
    log.error("dead letter", { messageId: msg.id });
    msg.ack();
  }
}

function sourceQueue(body: unknown): string | null {
  if (body && typeof body === "object" && "kind" in body && typeof (body as { kind: unknown }).kind === "string") return (body as { kind: string }).kind;
  return null;
}
