import type { contacts } from "../../db/schema/index.ts";
import { iso } from "../../platform/time.ts";
import { addressOfContactKey, chatIdOf, phoneOfContactKey } from "../chat-id.ts";
import type { Contact, ContactIdentity } from "./schemas.ts";

export type ContactRow = typeof contacts.$inferSelect;

export function toContact(row: ContactRow): Contact {
  return {
    id: row.id,
    phone: phoneOfContactKey(row.phone),
    chatId: chatIdOf(addressOfContactKey(row.phone)),
    name: row.name,
    email: row.email,
    tags: JSON.parse(row.tags) as string[],
    attributes: JSON.parse(row.attributes) as Record<string, unknown>,
    optedOut: row.optedOut,
    identity: row.identity ? (JSON.parse(row.identity) as ContactIdentity) : null,
    createdAt: iso(row.createdAt),
    updatedAt: iso(row.updatedAt),
  };
}

/** A new contact's row from its fields (tags deduplicated). */
export function newContactRow(
  id: string,
  accountId: string,
  phone: string,
  c: { name?: string; email?: string; tags?: string[]; attributes?: Record<string, unknown>; optedOut?: boolean },
  now: number,
): ContactRow {
  return {
    ...{ id, accountId, phone, name: c.name ?? null, email: c.email ?? null },
    ...{ tags: JSON.stringify([...new Set(c.tags ?? [])]), attributes: JSON.stringify(c.attributes ?? {}), optedOut: c.optedOut ?? false },
    ...{ identity: null, createdAt: now, updatedAt: now },
  };
}
