import { handleCompileQueue } from "./compile/index.ts";
import { handleDeliveryQueue, handleEventsQueue, onEventsDeadLetter } from "./events/index.ts";
import { handleSendQueue } from "./messaging/index.ts";
import { recordDeadLetters } from "./platform/dead-letters.ts";
import { log } from "./platform/log.ts";

/** The dead-letter queue: recorded by the platform, then each owning area settles its own messages. */
export const handleDeadLetters = (batch: MessageBatch<unknown>, env: Env): Promise<void> => recordDeadLetters(batch, env, [onEventsDeadLetter]);

type Consumer = (batch: MessageBatch<never>, env: Env, ctx: ExecutionContext) => Promise<void>;

/** Queue name (wrangler.toml) to consumer. A queue renamed in wrangler.toml must be renamed here. */
export const QUEUE_CONSUMERS: Record<string, Consumer> = {
  "texmsg-compile-jobs": handleCompileQueue,
  "texmsg-events": handleEventsQueue,
  "texmsg-webhook-deliveries": handleDeliveryQueue,
  "texmsg-sends": handleSendQueue,
  "texmsg-dlq": handleDeadLetters,
};

export async function handleQueue(batch: MessageBatch<unknown>, env: Env, ctx: ExecutionContext): Promise<void> {
  const consumer = QUEUE_CONSUMERS[batch.queue];
  if (!consumer) {
    log.error("no consumer for queue", { queue: batch.queue });
    batch.retryAll({ delaySeconds: 60 });
    return;
  }
  await consumer(batch as MessageBatch<never>, env, ctx);
}
