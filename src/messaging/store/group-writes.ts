import { sql } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import { messages } from "../../db/schema/index.ts";
import { insertRecordsStatements } from "../../events/emit.ts";
import type { EventRecord } from "../../events/types.ts";
import { jsonColumns, jsonParts, jsonTextParts } from "../../platform/d1.ts";
import type { MessageRow } from "../messages/mapper.ts";
import type { Shard } from "../../platform/shards.ts";

/**
 * Group commits of a Session DO's buffer (sessions/write-buffer.ts): its messages and their events in
 * one D1 batch (one transaction), each table in as few statements as its rows' JSON needs (one bound
 * parameter per statement: `jsonParts`), whatever the number of rows. Replayed after a crash the
 * same batch changes nothing twice: events are keyed by id, and a message row only moves forward.
 */

const MESSAGE = jsonColumns(messages);

/** A status's place: a row in D1 only takes a later one (`failed` only from pending or sent). */
const rank = (col: string) => `CASE ${col} WHEN 'pending' THEN 0 WHEN 'sent' THEN 1 WHEN 'delivered' THEN 2 WHEN 'read' THEN 3 ELSE 9 END`;

/**
 * New rows are inserted (the chats trigger runs for them); rows D1 has take the buffer's status and
 * its timestamps, only forward: a stale copy never moves a message back.
 */
function upsertMessages(shard: Shard, json: string): BatchItem<"sqlite"> {
  return shard.db
    .insert(messages)
    .select(sql`SELECT ${MESSAGE.keyExtracts} FROM json_each(${json}) AS j WHERE true`)
    .onConflictDoUpdate({
      target: messages.id,
      set: {
        status: sql`excluded.status`,
        sentAt: sql`coalesce(${messages.sentAt}, excluded.sent_at)`,
        deliveredAt: sql`coalesce(${messages.deliveredAt}, excluded.delivered_at)`,
        readAt: sql`coalesce(${messages.readAt}, excluded.read_at)`,
        errorCode: sql`coalesce(excluded.error_code, ${messages.errorCode})`,
        errorMessage: sql`coalesce(excluded.error_message, ${messages.errorMessage})`,
        externalId: sql`coalesce(${messages.externalId}, excluded.external_id)`,
      },
      setWhere: sql`(excluded.status = 'failed' AND ${messages.status} IN ('pending', 'sent')) OR (excluded.status <> 'failed' AND ${sql.raw(rank("excluded.status"))} > ${sql.raw(rank('"messages"."status"'))})`,
    });
}

/** What an event announcing a new message checks: that its row was inserted (`prepareEventsIfInserted`). */
export const MESSAGE_CAUSE = { table: messages, id: messages.id };

/**
 * New rows (inbound messages), many in one statement per JSON part: a row D1 already has by its
 * (session, network id) is skipped, so a replayed message is stored once. Each statement returns
 * the ids it inserted.
 */
export function insertNewMessagesStatements(shard: Shard, rows: MessageRow[]): BatchItem<"sqlite">[] {
  return jsonParts(rows.map(MESSAGE.rowJson)).map((part) =>
    shard.db.insert(messages).select(sql`SELECT ${MESSAGE.extracts} FROM json_each(${part}) AS j WHERE true`).onConflictDoNothing().returning({ id: messages.id }),
  );
}

/** Writes one group commit in one D1 round trip (atomic), on the session's account shard. */
export async function groupWrite(shard: Shard, rows: MessageRow[], records: EventRecord[]): Promise<void> {
  await groupWriteJson(shard, rows.map((r) => JSON.stringify(r)), records);
}

/**
 * As `groupWrite`, for rows kept as JSON text of `MessageRow` (the Session DO's buffer): they go to D1
 * as they are stored, with no parse and no serialization per row on the session's hot path.
 */
export async function groupWriteJson(shard: Shard, rowJson: readonly string[], records: EventRecord[]): Promise<void> {
  const statements = [...jsonTextParts(rowJson).map((p) => upsertMessages(shard, p)), ...insertRecordsStatements(shard, records)];
  if (statements.length > 0) await shard.db.batch(statements as [BatchItem<"sqlite">, ...BatchItem<"sqlite">[]]);
}
