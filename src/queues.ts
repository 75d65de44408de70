import { handleCompileQueue } from "./compile/index.ts";
import { handleDeliveryQueue, handleEventsQueue, handleThrottledQueue, onEventsDeadLetter } from "./events/index.ts";
import { runCampaignSendJob } from "./messaging/campaigns/index.ts";
import { runBulkJob, runMediaJob, sendQueueConsumer } from "./messaging/index.ts";
import { recordDeadLetters } from "./platform/dead-letters.ts";
import { withD1Usage, usageFields } from "./platform/d1-usage.ts";
import { log } from "./platform/log.ts";

/** The dead-letter queue: recorded by the platform, then each owning area settles its own messages. */
export const handleDeadLetters = (batch: MessageBatch<unknown>, env: Env): Promise<void> => recordDeadLetters(batch, env, [onEventsDeadLetter]);

export type Consumer = (batch: MessageBatch<never>, env: Env, ctx: ExecutionContext) => Promise<void>;

/** The queues of wrangler.toml. A queue renamed there must be renamed here. */
export type QueueName = "texmsg-compile-jobs" | "texmsg-events" | "texmsg-webhook-deliveries" | "texmsg-webhook-throttled" | "texmsg-sends" | "texmsg-dlq";
export type QueueConsumers = Readonly<Record<QueueName, Consumer>>;

/** Queue name to consumer, with SEND_QUEUE's job kinds wired to their modules. */
export const QUEUE_CONSUMERS: QueueConsumers = Object.freeze({
  "texmsg-compile-jobs": handleCompileQueue,
  "texmsg-events": handleEventsQueue,
  "texmsg-webhook-deliveries": handleDeliveryQueue,
  "texmsg-webhook-throttled": handleThrottledQueue,
  "texmsg-sends": sendQueueConsumer({ bulk: runBulkJob, campaign: runCampaignSendJob, media: runMediaJob }),
  "texmsg-dlq": handleDeadLetters,
});

/** The Worker's `queue` handler over the given consumers (tests pass their own). */
export function createQueueHandler(consumers: QueueConsumers = QUEUE_CONSUMERS): (batch: MessageBatch<unknown>, env: Env, ctx: ExecutionContext) => Promise<void> {
  return async (batch, env, ctx) => {
    const consumer = (consumers as Record<string, Consumer | undefined>)[batch.queue];
    if (!consumer) {
      log.error("no consumer for queue", { queue: batch.queue });
      batch.retryAll({ delaySeconds: 60 });
      return;
    }
    // What the batch cost in D1, per database, on one line per batch.
    const startedAt = Date.now();
    const { usage } = await withD1Usage(() => consumer(batch as MessageBatch<never>, env, ctx));
    log.info("queue batch", { queue: batch.queue, messages: batch.messages.length, durationMs: Date.now() - startedAt, ...usageFields(usage) });
  };
}

export const handleQueue = createQueueHandler();
