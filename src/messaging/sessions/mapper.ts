import type { messagingSessions } from "../../db/schema/index.ts";
import { chatIdOf, e164Of } from "../chat-id.ts";
import { NETWORKS } from "../network-traits.ts";
import type { Session, SessionHealth } from "./schemas.ts";

export type SessionRow = typeof messagingSessions.$inferSelect;

export function toSession(row: SessionRow, phoneNumberId?: string): Session {
  const { webhookPath } = NETWORKS[row.network];
  return {
    id: row.id,
    name: row.name,
    network: row.network,
    status: row.status,
    statusReason: row.statusReason,
    phoneNumber: row.phoneNumber ? e164Of(row.phoneNumber) : null,
    me: row.phoneNumber ? { chatId: chatIdOf(row.phoneNumber) } : null,
    credentials: webhookPath ? { set: row.credentialsSet, ...(phoneNumberId ? { phoneNumberId } : {}) } : { set: false },
    webhookPath: webhookPath?.(row.id) ?? null,
    sendRatePerMinute: row.sendRatePerMinute,
    health: row.health ? (JSON.parse(row.health) as SessionHealth) : null,
    createdAt: new Date(row.createdAt).toISOString(),
    updatedAt: new Date(row.updatedAt).toISOString(),
  };
}
