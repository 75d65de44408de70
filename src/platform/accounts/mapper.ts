import type { apiKeys } from "../../db/schema/index.ts";
import { iso } from "../time.ts";
import type { AuthContext } from "../types.ts";
import type { AccountView, KeyView } from "./schemas.ts";

export function toKeyView(row: typeof apiKeys.$inferSelect): KeyView {
  return { id: row.id, name: row.name, prefix: row.prefix, createdAt: iso(row.createdAt), revokedAt: iso(row.revokedAt) };
}

/** The caller's account, from the (briefly cached) key lookup: no extra query per request. */
export function toAccountView(auth: AuthContext): AccountView {
  return { id: auth.accountId, name: auth.accountName, plan: auth.plan, rateLimitPerMinute: auth.limitPerMinute, createdAt: iso(auth.accountCreatedAt) };
}
