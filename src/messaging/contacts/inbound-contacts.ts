import { and, eq, sql } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import { contacts } from "../../db/schema/index.ts";
import { eventRecord, prepareEventsIfInserted } from "../../events/emit.ts";
import type { EventRecord } from "../../events/types.ts";
import { jsonColumns, jsonParts } from "../../platform/d1.ts";
import { newId } from "../../platform/ids.ts";
import type { Shard } from "../../platform/shards.ts";
import { contactKeyOf } from "../chat-id.ts";
import { toContact, type ContactRow } from "./mapper.ts";
import type { ContactIdentity } from "./schemas.ts";

/** The sender of an inbound message, to become a contact if the account has none for its address. */
export interface Sender {
  accountId: string;
  address: string;
  name?: string;
  /** The message was a STOP: the contact is (or becomes) opted out. */
  optOut: boolean;
  sessionId: string | null;
  identity?: ContactIdentity;
  /** The session's number for the `contact.created` event. */
  sequence?: number;
}

const CONTACT = jsonColumns(contacts);

/**
 * The senders of many inbound messages as contacts, in one `db.batch` with their messages: each
 * unknown address becomes a contact (`contact.created`, recorded only if its row was inserted:
 * an address already known, or named twice in the batch, makes one contact and one event), a STOP
 * opts a known contact out, and a network identity that changed is updated. The inserts come first in
 * the returned statements (`inserts` of them); `created` reads their results: the events recorded.
 */
export function ensureContactsStatements(shard: Shard, senders: Sender[], now: number): { statements: BatchItem<"sqlite">[]; inserts: number; created(results: unknown[]): EventRecord[] } {
  const { db } = shard;
  const rows: ContactRow[] = [];
  const events: { record: EventRecord; causeId: string }[] = [];
  const updates: BatchItem<"sqlite">[] = [];
  for (const s of senders) {
    // A person known only by BSUID is keyed by it (contactKeyOf), so a replay finds the same contact.
    const phone = contactKeyOf(s.address);
    const known = s.identity && Object.keys(s.identity).length > 0 ? JSON.stringify(s.identity) : null;
    const row: ContactRow = { id: newId("con"), accountId: s.accountId, phone, name: s.name ?? null, email: null, tags: "[]", attributes: "{}", optedOut: s.optOut, identity: known, createdAt: now, updatedAt: now };
    rows.push(row);
    events.push({ record: eventRecord({ type: "contact.created", accountId: s.accountId, sessionId: s.sessionId, data: toContact(row) }, now, s.sequence !== undefined ? { sequence: s.sequence } : {}), causeId: row.id });
    const same = and(eq(contacts.accountId, s.accountId), eq(contacts.phone, phone));
    if (s.optOut) updates.push(db.update(contacts).set({ optedOut: true, updatedAt: now }).where(and(same, eq(contacts.optedOut, false))));
    // A known contact's identity changes when the network reports a new one (a new BSUID after a number change, a new username).
    if (known) updates.push(db.update(contacts).set({ identity: known, updatedAt: now }).where(and(same, sql`${contacts.identity} is not ${known}`)));
  }
  const inserts = jsonParts(rows.map(CONTACT.rowJson)).map((part) =>
    db.insert(contacts).select(sql`SELECT ${CONTACT.extracts} FROM json_each(${part}) AS j WHERE true`).onConflictDoNothing().returning({ id: contacts.id }),
  );
  const announce = prepareEventsIfInserted(shard, events, { table: contacts, id: contacts.id });
  return {
    statements: [...inserts, ...announce, ...updates],
    inserts: inserts.length,
    created: (results) => {
      const ids = new Set(results.slice(0, inserts.length).flatMap((r) => (r as { id: string }[]).map((x) => x.id)));
      return events.filter((e) => ids.has(e.causeId)).map((e) => e.record);
    },
  };
}
