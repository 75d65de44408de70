import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { accountId, createdAt } from "./columns.ts";

// Tables of the directory database (`DB`) that are looked up before the account is known; they
// say which account (and so which shard) a public id belongs to.

/**
 * Every messaging session's account, by session id: a network callback (`/hooks/whatsapp/:sessionId`)
 * names only the session, and this row routes it to the account's shard. Written with the session.
 */
export const sessionRoutes = sqliteTable("session_routes", {
  sessionId: text("session_id").primaryKey(),
  accountId: accountId(),
  network: text("network", { enum: ["sandbox", "whatsapp"] }).notNull(),
  createdAt: createdAt(),
});

/**
 * Single-use tickets that open the live event stream (a browser cannot set `Authorization` on a
 * WebSocket). Only the SHA-256 of the ticket is kept; using it deletes the row.
 */
export const streamTickets = sqliteTable(
  "stream_tickets",
  {
    hash: text("hash").primaryKey(),
    accountId: accountId(),
    /** The API key that asked for it: the stream runs as that key (rate limit, revocation). */
    keyId: text("key_id").notNull(),
    expiresAt: integer("expires_at").notNull(),
    createdAt: createdAt(),
  },
  (t) => [index("stream_tickets_expiry_idx").on(t.expiresAt)],
);
