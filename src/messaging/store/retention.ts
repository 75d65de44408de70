import { chunk } from "../../platform/batching.ts";
import { itemsPerStatement } from "../../platform/d1.ts";
import { oldestExpired } from "../../platform/retention.ts";
import type { Shard } from "../../platform/shards.ts";

/** Retention of `messages` rows: the oldest settled ones, deleted in bounded statements. */


/** Ids per DELETE, with room for the statement's own parameters. */
const IDS_PER_DELETE = itemsPerStatement(1, 10);

/** The oldest messages created before `before` and no longer pending, with the upload each refers to. */
export async function oldestSettled(shard: Shard, before: number): Promise<{ id: string; media_id: string | null }[]> {
  return oldestExpired<{ id: string; media_id: string | null }>(
    shard.d1,
    { table: "messages", prefix: "msg", before, where: "status <> 'pending'" },
    "id, json_extract(media, '$.mediaId') AS media_id",
  );
}

export async function deleteMessages(shard: Shard, ids: string[]): Promise<void> {
  for (const part of chunk(ids, IDS_PER_DELETE)) {
    await shard.d1.prepare(`DELETE FROM messages WHERE id IN (${part.map(() => "?").join(", ")})`)
      .bind(...part)
      .run();
  }
}

