import { and, eq, inArray, sql } from "drizzle-orm";
import { messages } from "../../db/schema/index.ts";
import { prepareEvents, type EmitInput, type EventOrder } from "../../events/emit.ts";
import { chunk } from "../../platform/batching.ts";
import type { FailureReason } from "../networks/driver.ts";
import { toMessage, type MessageRow } from "../messages/mapper.ts";
import { deliveredStamp, type MessageStatus } from "../status.ts";
import { ID_CHUNK } from "./reads.ts";
import type { Shard } from "../../platform/shards.ts";
import { sequenced } from "../session-sequence.ts";

/** Status changes of messages: forward only, one event per step taken. */

const FROM: Record<"sent" | "delivered" | "read" | "failed", MessageStatus[]> = {
  sent: ["pending"],
  delivered: ["pending", "sent"],
  read: ["pending", "sent", "delivered"],
  failed: ["pending", "sent"],
};

const EVENT = { sent: "message.sent", delivered: "message.delivered", read: "message.read" } as const;

export type Target = "sent" | "delivered" | "read" | "failed";
export type Selector = { ids: string[] } | { externalIds: string[] };

/**
 * Moves messages of one session forward to `target` and emits one event per step actually taken.
 * Each step is one conditional UPDATE (status in the allowed prior states), so concurrent or
 * out-of-order receipts can never move a message backwards, and a step already taken is a no-op
 * (replayed receipts emit nothing). A jump (read before delivered) passes through the skipped steps.
 */
export async function advanceStatus(
  env: Env,
  shard: Shard,
  accountId: string,
  sessionId: string,
  selector: Selector,
  target: Target,
  at: number,
  error?: FailureReason,
  opts: {
    afterSent?: boolean;
    /** When a `read` passing through `delivered` was delivered (default `at`). */
    deliveredAt?: number;
    /** Takes the recorded events' ids to put on the queue (the Session DO coalesces them); default: enqueue now. */
    enqueue?: (eventIds: string[]) => void;
    /** The session's numbering of its events (the Session DO's sequence), per step. */
    order?: (step: "sent" | "delivered" | "read") => EventOrder;
  } = {},
): Promise<MessageRow[]> {
  const db = shard.db;
  let steps: Target[] = target === "failed" ? ["failed"] : (["sent", "delivered", "read"] as const).slice(0, ["sent", "delivered", "read"].indexOf(target) + 1);
  // Receipts of messages known to be sent skip the (no-op) sent step: one statement fewer.
  if (opts.afterSent) steps = steps.filter((s) => s !== "sent");
  const keys = "ids" in selector ? selector.ids : selector.externalIds;
  const column = "ids" in selector ? messages.id : messages.externalId;
  const changed: MessageRow[] = [];
  const events: EmitInput[] = [];
  for (const part of chunk(keys, ID_CHUNK)) {
    for (const step of steps) {
      const set: Record<string, unknown> = { status: step };
      if (step === "sent") set.sentAt = sql`coalesce(${messages.sentAt}, ${at})`;
      if (step === "delivered") set.deliveredAt = sql`coalesce(${messages.deliveredAt}, ${deliveredStamp(at, opts.deliveredAt)})`;
      if (step === "read") set.readAt = sql`coalesce(${messages.readAt}, ${at})`;
      if (step === "failed") {
        set.errorCode = error?.code ?? "failed";
        set.errorMessage = error?.message ?? "The network could not send the message.";
      }
      const rows = await db
        .update(messages)
        .set(set as Partial<MessageRow>)
        .where(and(eq(messages.sessionId, sessionId), inArray(column, part), inArray(messages.status, FROM[step])))
        .returning();
      for (const row of rows) {
        if (step !== "failed") events.push({ type: EVENT[step], accountId, sessionId, data: toMessage(row), ...(opts.order ? { order: opts.order(step) } : {}) });
        if (step === target) changed.push(row);
      }
    }
  }
  // Numbered by the caller's `order` when it has one (the Session DO), else by the session (an RPC).
  const prepared = prepareEvents(env, shard, await sequenced(env, events));
  if (prepared.statements.length > 0) await db.batch(prepared.statements as [(typeof prepared.statements)[number], ...(typeof prepared.statements)[number][]]);
  if (opts.enqueue) opts.enqueue(prepared.events.map((e) => e.id));
  else await prepared.enqueue();
  return changed;
}
