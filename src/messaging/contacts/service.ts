import { and, desc, eq, getTableColumns, inArray, lt, or, sql } from "drizzle-orm";
import { contacts } from "../../db/schema/index.ts";
import { assertEventFits, emit, enqueueEvents, prepareEventAfterChange } from "../../events/emit.ts";
import { ApiError, errors } from "../../platform/errors.ts";
import { newId } from "../../platform/ids.ts";
import { decodeCursor, IdCursor, toPage } from "../../platform/pagination.ts";
import { ACCEPTED_ADDRESS_FORMS, addressOfContactKey, contactKeyOf, e164Of, parseAddress } from "../chat-id.ts";
import { CreateContactBody, type Contact, type ContactIdentity } from "./schemas.ts";
import { newContactRow, toContact, type ContactRow as Row } from "./mapper.ts";
import { itemsPerStatement } from "../../platform/d1.ts";
import { chunk } from "../../platform/batching.ts";
import { accountShard, type Shard } from "../../platform/shards.ts";

export interface ContactInput {
  phone: string;
  name?: string;
  email?: string;
  tags?: string[];
  attributes?: Record<string, unknown>;
  optedOut?: boolean;
}

export async function createContact(env: Env, accountId: string, input: ContactInput): Promise<Contact> {
  const digits = parseAddress(input.phone);
  if (!digits) throw errors.invalidRequest(`phone must be ${ACCEPTED_ADDRESS_FORMS}.`, [{ path: "phone", message: "not a valid phone number" }]);
  const now = Date.now();
  const row = newContactRow(newId("con"), accountId, e164Of(digits), input, now);
  const contact = toContact(row);
  // The row and its contact.created in one batch: both are written or neither (an event that does
  // not fit is refused here, before anything is written).
  const shard = await accountShard(env, accountId);
  const { db } = shard;
  const announce = prepareEventAfterChange(shard, { type: "contact.created", accountId, data: contact });
  const [inserted] = await db.batch([db.insert(contacts).values(row).onConflictDoNothing().returning({ id: contacts.id }), announce.statement]);
  if (inserted.length === 0) throw errors.conflict("contact_exists", `A contact with phone ${row.phone} already exists.`, { phone: row.phone });
  await enqueueEvents(env, shard, [announce.event.id]);
  return contact;
}

/** Contacts of an account by phone (E.164), for the caller's batch. */
export function contactsByPhonesQuery(shard: Shard, accountId: string, phones: string[]) {
  return shard.db.select().from(contacts).where(and(eq(contacts.accountId, accountId), inArray(contacts.phone, phones)));
}

export async function getContact(env: Env, accountId: string, id: string): Promise<Contact> {
  const row = await (await accountShard(env, accountId)).db.select().from(contacts).where(and(eq(contacts.accountId, accountId), eq(contacts.id, id))).get();
  if (!row) throw errors.notFound("contact");
  return toContact(row);
}

export async function updateContact(
  env: Env,
  accountId: string,
  id: string,
  patch: { name?: string | null; email?: string | null; tags?: string[]; attributes?: Record<string, unknown>; optedOut?: boolean },
): Promise<Contact> {
  const set: Partial<Row> = { updatedAt: Date.now() };
  if (patch.name !== undefined) set.name = patch.name;
  if (patch.email !== undefined) set.email = patch.email;
  if (patch.tags !== undefined) set.tags = JSON.stringify([...new Set(patch.tags)]);
  if (patch.attributes !== undefined) set.attributes = JSON.stringify(patch.attributes);
  if (patch.optedOut !== undefined) set.optedOut = patch.optedOut;
  const [row] = await (await accountShard(env, accountId)).db.update(contacts).set(set).where(and(eq(contacts.accountId, accountId), eq(contacts.id, id))).returning();
  if (!row) throw errors.notFound("contact");
  return toContact(row);
}

/**
 * A customer's marketing preference as the network reports it (WhatsApp's "stop promotions"):
 * opts the contact with this number out of (or back into) campaigns. No contact: nothing to change.
 */
export async function setOptedOutByPhone(env: Env, accountId: string, address: string, optedOut: boolean): Promise<void> {
  await (await accountShard(env, accountId)).db
    .update(contacts)
    .set({ optedOut, updatedAt: Date.now() })
    .where(and(eq(contacts.accountId, accountId), eq(contacts.phone, contactKeyOf(address)), eq(contacts.optedOut, !optedOut)));
}

/** The account's contacts' addresses by BSUID, for the ones known: BSUID -> digits (or the BSUID itself while no number is known). */
export async function phonesByUserIds(shard: Shard, accountId: string, userIds: string[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  // The literal path matches the expression index (contacts_account_user_idx).
  const userId = sql<string>`json_extract(${contacts.identity}, '$.userId')`;
  for (const part of chunk(userIds, itemsPerStatement(1, 1))) {
    const rows = await shard.db.select({ phone: contacts.phone, userId }).from(contacts).where(and(eq(contacts.accountId, accountId), inArray(userId, part))).all();
    for (const r of rows) out.set(r.userId, addressOfContactKey(r.phone));
  }
  return out;
}

/** The contact with this number (E.164), or else the one known by this BSUID. */
export async function contactByPhoneOrUser(shard: Shard, accountId: string, phone: string | null, userId: string | null): Promise<Row | undefined> {
  const byPhone = phone ? await shard.db.select().from(contacts).where(and(eq(contacts.accountId, accountId), eq(contacts.phone, phone))).get() : undefined;
  if (byPhone || !userId) return byPhone;
  return shard.db.select().from(contacts).where(and(eq(contacts.accountId, accountId), sql`json_extract(${contacts.identity}, '$.userId') = ${userId}`)).get();
}

/**
 * A contact's new identity, and with `phone` (E.164) its new number, for the caller's batch. The
 * number moves only when no other contact of the account has it (the statement is then a no-op).
 */
export function changeIdentityStatements(shard: Shard, accountId: string, id: string, identity: ContactIdentity | null, phone: string | null, now: number) {
  const { db } = shard;
  const own = and(eq(contacts.accountId, accountId), eq(contacts.id, id));
  return [
    db.update(contacts).set({ identity: identity && Object.keys(identity).length ? JSON.stringify(identity) : null, updatedAt: now }).where(own),
    ...(phone ? [db.update(contacts).set({ phone, updatedAt: now }).where(and(own, sql`not exists (select 1 from ${contacts} c where c.account_id = ${accountId} and c.phone = ${phone})`))] : []),
  ];
}

/** Deletes a contact of the account, for the caller's batch. */
export function deleteContactStatement(shard: Shard, accountId: string, id: string) {
  return shard.db.delete(contacts).where(and(eq(contacts.accountId, accountId), eq(contacts.id, id)));
}

export async function deleteContact(env: Env, accountId: string, id: string): Promise<{ id: string; deleted: true }> {
  const [row] = await (await accountShard(env, accountId)).db.delete(contacts).where(and(eq(contacts.accountId, accountId), eq(contacts.id, id))).returning({ id: contacts.id });
  if (!row) throw errors.notFound("contact");
  return { id, deleted: true };
}

export async function listContacts(
  env: Env,
  accountId: string,
  q: { tag?: string; q?: string; optedOut?: "true" | "false"; limit: number; cursor?: string },
): Promise<{ data: Contact[]; nextCursor: string | null }> {
  const cursor = decodeCursor(q.cursor, IdCursor);
  const conds = [eq(contacts.accountId, accountId)];
  if (cursor) conds.push(lt(contacts.id, cursor.id));
  if (q.optedOut) conds.push(eq(contacts.optedOut, q.optedOut === "true"));
  if (q.tag) conds.push(sql`exists (select 1 from json_each(${contacts.tags}) where json_each.value = ${q.tag})`);
  if (q.q) {
    const pattern = `%${q.q.replace(/[\\%_]/g, (m) => `\\${m}`)}%`;
    conds.push(or(sql`${contacts.name} like ${pattern} escape '\\'`, sql`${contacts.phone} like ${pattern} escape '\\'`)!);
  }
  const rows = await (await accountShard(env, accountId)).db.select().from(contacts).where(and(...conds)).orderBy(desc(contacts.id)).limit(q.limit + 1);
  const page = toPage(rows, q.limit, (r) => ({ id: r.id }));
  return { data: page.data.map(toContact), nextCursor: page.nextCursor };
}

/** Rows per INSERT: one bound variable per column of a row. */
const IMPORT_ROWS_PER_INSERT = itemsPerStatement(Object.keys(getTableColumns(contacts)).length);

/** Bulk create: valid items inserted in one D1 batch; existing phones counted and left alone. */
export async function importContacts(env: Env, accountId: string, items: unknown[]) {
  const rejected: { index: number; error: { code: string; message: string } }[] = [];
  const rows: Row[] = [];
  const phones = new Set<string>();
  const now = Date.now();
  let existing = 0;
  items.forEach((item, index) => {
    const parsed = CreateContactBody.safeParse(item);
    const digits = parsed.success ? parseAddress(parsed.data.phone) : null;
    if (!parsed.success || !digits) {
      const issue = parsed.success ? { path: ["phone"], message: `must be ${ACCEPTED_ADDRESS_FORMS}` } : parsed.error.issues[0]!;
      rejected.push({ index, error: { code: "invalid_request", message: `${issue.path.join(".") || "item"}: ${issue.message}` } });
      return;
    }
    const phone = e164Of(digits);
    if (phones.has(phone)) {
      existing++;
      return;
    }
    const c = parsed.data;
    const row = newContactRow(newId("con", now), accountId, phone, c, now);
    try {
      // Its contact.created is emitted after the insert: an event that could not be recorded is
      // refused now, with the item, rather than leave a contact that was never announced.
      assertEventFits({ type: "contact.created", accountId, data: toContact(row) });
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      rejected.push({ index, error: { code: err.code, message: err.message } });
      return;
    }
    phones.add(phone);
    rows.push(row);
  });
  const { db } = await accountShard(env, accountId);
  const inserts = [];
  for (let i = 0; i < rows.length; i += IMPORT_ROWS_PER_INSERT) {
    inserts.push(db.insert(contacts).values(rows.slice(i, i + IMPORT_ROWS_PER_INSERT)).onConflictDoNothing().returning());
  }
  const created = inserts.length ? (await db.batch(inserts as [(typeof inserts)[number], ...(typeof inserts)[number][]])).flat() : [];
  existing += rows.length - created.length;
  if (created.length) await emit(env, created.map((row) => ({ type: "contact.created" as const, accountId, data: toContact(row) })));
  return { created: created.length, existing, rejected };
}
