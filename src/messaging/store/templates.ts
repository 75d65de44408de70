import { and, asc, eq, gt, lt, sql } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import { messageTemplates } from "../../db/schema/index.ts";
import { itemsPerStatement } from "../../platform/d1.ts";
import { newId } from "../../platform/ids.ts";
import type { Shard } from "../../platform/shards.ts";
import type { TemplateFromNetwork, TemplateUpdate } from "../networks/driver.ts";
import type { TemplateRow } from "../templates/mapper.ts";

/** The most templates a session keeps (Meta's own cap for a verified business account is 6,000). */
export const MAX_TEMPLATES = 6000;
const ROWS_PER_INSERT = itemsPerStatement(14);
const STATEMENTS_PER_BATCH = 50;

/** One page of the session's templates in id order (the order they were first seen) after `afterId`. */
export function sessionTemplates(shard: Shard, accountId: string, sessionId: string, page: { afterId?: string; limit: number }): Promise<TemplateRow[]> {
  return shard.db
    .select()
    .from(messageTemplates)
    .where(and(eq(messageTemplates.accountId, accountId), eq(messageTemplates.sessionId, sessionId), page.afterId ? gt(messageTemplates.id, page.afterId) : undefined))
    .orderBy(asc(messageTemplates.id))
    .limit(page.limit);
}

/** How many templates the session keeps. */
export async function templateCount(shard: Shard, accountId: string, sessionId: string): Promise<number> {
  const row = await shard.db
    .select({ n: sql<number>`count(*)` })
    .from(messageTemplates)
    .where(and(eq(messageTemplates.accountId, accountId), eq(messageTemplates.sessionId, sessionId)))
    .get();
  return row?.n ?? 0;
}

/** When the session's templates were last brought in line with the network (null: never). */
export async function lastSyncedAt(shard: Shard, accountId: string, sessionId: string): Promise<number | null> {
  const row = await shard.db
    .select({ at: sql<number | null>`max(${messageTemplates.syncedAt})` })
    .from(messageTemplates)
    .where(and(eq(messageTemplates.accountId, accountId), eq(messageTemplates.sessionId, sessionId)))
    .get();
  return row?.at ?? null;
}

export function templateOf(shard: Shard, accountId: string, sessionId: string, name: string, language: string): Promise<TemplateRow | undefined> {
  return shard.db
    .select()
    .from(messageTemplates)
    .where(and(eq(messageTemplates.accountId, accountId), eq(messageTemplates.sessionId, sessionId), eq(messageTemplates.name, name), eq(messageTemplates.language, language)))
    .get();
}

/** Writes what the network says of these templates (new rows, or the existing ones of the same name and language brought up to date). */
export async function upsertTemplates(shard: Shard, accountId: string, sessionId: string, list: TemplateFromNetwork[], now: number): Promise<void> {
  const rows = list.map((t) => ({
    id: newId("tpl"),
    accountId,
    sessionId,
    name: t.name,
    language: t.language,
    externalId: t.externalId,
    status: t.status,
    category: t.category,
    components: JSON.stringify(t.components),
    quality: t.quality,
    rejectedReason: t.rejectedReason,
    syncedAt: now,
    createdAt: now,
    updatedAt: now,
  }));
  const statements: BatchItem<"sqlite">[] = [];
  for (let i = 0; i < rows.length; i += ROWS_PER_INSERT) {
    statements.push(
      shard.db
        .insert(messageTemplates)
        .values(rows.slice(i, i + ROWS_PER_INSERT))
        .onConflictDoUpdate({
          target: [messageTemplates.sessionId, messageTemplates.name, messageTemplates.language],
          set: {
            externalId: sql`excluded.external_id`,
            status: sql`excluded.status`,
            category: sql`excluded.category`,
            components: sql`excluded.components`,
            quality: sql`excluded.quality`,
            rejectedReason: sql`excluded.rejected_reason`,
            syncedAt: sql`excluded.synced_at`,
            updatedAt: sql`excluded.updated_at`,
          },
        }),
    );
  }
  for (let i = 0; i < statements.length; i += STATEMENTS_PER_BATCH) {
    const part = statements.slice(i, i + STATEMENTS_PER_BATCH);
    await shard.db.batch(part as [BatchItem<"sqlite">, ...BatchItem<"sqlite">[]]);
  }
}

/** After a complete sync at `syncedAt`: the session's rows the network no longer lists (nothing since touched them) go. */
export async function dropTemplatesNotSyncedSince(shard: Shard, accountId: string, sessionId: string, syncedAt: number): Promise<void> {
  await shard.db.delete(messageTemplates).where(and(eq(messageTemplates.accountId, accountId), eq(messageTemplates.sessionId, sessionId), lt(messageTemplates.syncedAt, syncedAt)));
}

/** A change the network reported (webhook, sandbox approval): the row by its network id, else by name and language; undefined when unknown. */
export async function applyTemplateUpdate(shard: Shard, accountId: string, sessionId: string, u: TemplateUpdate, now: number): Promise<TemplateRow | undefined> {
  const set = {
    ...(u.status !== undefined ? { status: u.status } : {}),
    ...(u.quality !== undefined ? { quality: u.quality } : {}),
    ...(u.category !== undefined ? { category: u.category } : {}),
    ...(u.rejectedReason !== undefined ? { rejectedReason: u.rejectedReason } : {}),
    syncedAt: now,
    updatedAt: now,
  };
  const scope = and(eq(messageTemplates.accountId, accountId), eq(messageTemplates.sessionId, sessionId));
  if (u.externalId) {
    const [row] = await shard.db.update(messageTemplates).set(set).where(and(scope, eq(messageTemplates.externalId, u.externalId))).returning();
    if (row) return row;
  }
  const [row] = await shard.db.update(messageTemplates).set(set).where(and(scope, eq(messageTemplates.name, u.name), eq(messageTemplates.language, u.language))).returning();
  return row;
}

/** Deletes a name's rows (one language, or the one with this network id, when given): answers how many. */
export async function deleteTemplateRows(shard: Shard, accountId: string, sessionId: string, name: string, only: { language?: string; externalId?: string }): Promise<number> {
  const rows = await shard.db
    .delete(messageTemplates)
    .where(
      and(
        eq(messageTemplates.accountId, accountId),
        eq(messageTemplates.sessionId, sessionId),
        eq(messageTemplates.name, name),
        only.language ? eq(messageTemplates.language, only.language) : undefined,
        only.externalId ? eq(messageTemplates.externalId, only.externalId) : undefined,
      ),
    )
    .returning({ id: messageTemplates.id });
  return rows.length;
}

/** The session's templates still PENDING, oldest first (the sandbox approves them). */
export function pendingTemplates(shard: Shard, accountId: string, sessionId: string, limit: number): Promise<{ name: string; language: string; createdAt: number }[]> {
  return shard.db
    .select({ name: messageTemplates.name, language: messageTemplates.language, createdAt: messageTemplates.createdAt })
    .from(messageTemplates)
    .where(and(eq(messageTemplates.accountId, accountId), eq(messageTemplates.sessionId, sessionId), eq(messageTemplates.status, "PENDING")))
    .orderBy(asc(messageTemplates.createdAt))
    .limit(limit);
}

/** Whether the session has a template of this name (any language). */
export async function hasTemplateNamed(shard: Shard, accountId: string, sessionId: string, name: string): Promise<boolean> {
  const row = await shard.db
    .select({ id: messageTemplates.id })
    .from(messageTemplates)
    .where(and(eq(messageTemplates.accountId, accountId), eq(messageTemplates.sessionId, sessionId), eq(messageTemplates.name, name)))
    .get();
  return row !== undefined;
}
