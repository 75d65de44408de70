import { and, eq, gt, inArray } from "drizzle-orm";
import { chats } from "../../db/schema/index.ts";
import { chunk } from "../../platform/batching.ts";
import { chatIdOf, digitsOfChatId } from "../chat-id.ts";
import { ID_CHUNK } from "./reads.ts";
import type { Shard } from "../../platform/shards.ts";

/** Reads of `chats`, the per-chat summary that triggers on `messages` keep (migrations). */

/** Of these recipients (digits), those who last wrote to the session after `since`: digits -> when. */
export async function lastInboundSince(shard: Shard, sessionId: string, recipients: string[], since: number): Promise<Map<string, number>> {
  const found = new Map<string, number>();
  for (const part of chunk(recipients, ID_CHUNK)) {
    const rows = await shard.db
      .select({ chatId: chats.chatId, at: chats.lastInboundAt })
      .from(chats)
      .where(and(eq(chats.sessionId, sessionId), inArray(chats.chatId, part.map(chatIdOf)), gt(chats.lastInboundAt, since)))
      .all();
    for (const r of rows) if (r.at !== null) found.set(digitsOfChatId(r.chatId), r.at);
  }
  return found;
}
