import { index, integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { accountId, createdAt } from "./columns.ts";

export const accounts = sqliteTable("accounts", {
  id: text("id").primaryKey(),
  name: text("name").notNull(),
  plan: text("plan", { enum: ["free", "pro", "enterprise"] }).notNull(),
  /** Requests per minute for enterprise accounts; null for the fixed plans. */
  rateLimitPerMinute: integer("rate_limit_per_minute"),
  /** The shard database (`SHARD_<n>`) holding the account's messaging and events rows; never changes. */
  shard: integer("shard").notNull().default(0),
  createdAt: createdAt(),
});

export const apiKeys = sqliteTable(
  "api_keys",
  {
    id: text("id").primaryKey(),
    accountId: accountId().references(() => accounts.id),
    name: text("name").notNull(),
    /** The first characters of the key, safe to show in listings. */
    prefix: text("prefix").notNull(),
    /** SHA-256 of the whole key, hex. Keys have 192 random bits, so a fast hash is enough. */
    hash: text("hash").notNull().unique(),
    createdAt: createdAt(),
    revokedAt: integer("revoked_at"),
  },
  (t) => [index("api_keys_account_idx").on(t.accountId)],
);

export const idempotencyKeys = sqliteTable(
  "idempotency_keys",
  {
    accountId: accountId(),
    key: text("key").notNull(),
    /** SHA-256 of method, path and body: the same key with another request is refused. */
    requestHash: text("request_hash").notNull(),
    state: text("state", { enum: ["in_progress", "done"] }).notNull(),
    responseStatus: integer("response_status"),
    responseHeaders: text("response_headers"),
    /** Base64 body when small; otherwise the body lives in R2 under `responseR2Key`. */
    responseBody: text("response_body"),
    responseR2Key: text("response_r2_key"),
    createdAt: createdAt(),
    expiresAt: integer("expires_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.accountId, t.key] }), index("idempotency_expires_idx").on(t.expiresAt)],
);

/** Queue messages that exhausted their retries (see platform/dead-letters.ts). */
export const deadLetters = sqliteTable("dead_letters", {
  id: text("id").primaryKey(),
  messageId: text("message_id").notNull().unique(),
  queue: text("queue"),
  body: text("body").notNull(),
  attempts: integer("attempts").notNull(),
  createdAt: createdAt(),
});
