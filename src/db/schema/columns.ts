import { type AnySQLiteColumn, index, integer, text } from "drizzle-orm/sqlite-core";

// Column groups several tables share. Functions, not constants, so every table gets its own
// builders. No tables here: drizzle-kit reads this file with the others and finds nothing to create.

/** The owning account, on every account-scoped row. */
export const accountId = () => text("account_id").notNull();

/** The messaging session a row belongs to. */
export const sessionId = () => text("session_id").notNull();

/** A conversation: `<digits>@c.us`. */
export const chatId = () => text("chat_id").notNull();

/** When the row was created (epoch ms). */
export const createdAt = () => integer("created_at").notNull();

/** How most account-scoped tables begin: their id and the owning account. */
export const accountRow = () => ({ id: text("id").primaryKey(), accountId: accountId() });

/** An account row that also belongs to one messaging session. */
export const sessionRow = () => ({ ...accountRow(), sessionId: sessionId() });

/** Creation and last-change instants (epoch ms). */
export const timestamps = () => ({ createdAt: createdAt(), updatedAt: integer("updated_at").notNull() });

/** A count that starts at zero. */
export const counter = (name: string) => integer(name).notNull().default(0);

/** A JSON document stored as text, empty by default. */
export const jsonText = (name: string, empty: "[]" | "{}") => text(name).notNull().default(empty);

/** The name, phone (E.164 with "+") and email of a contact. */
export const contactCard = () => ({
  phone: text("phone").notNull(),
  name: text("name"),
  email: text("email"),
});

/** An account's listing, paged by id (keyset pagination). */
export const accountListIndex = (name: string, t: { accountId: AnySQLiteColumn; id: AnySQLiteColumn }) => index(name).on(t.accountId, t.id);
