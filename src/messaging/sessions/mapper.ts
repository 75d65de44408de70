import type { messagingSessions } from "../../db/schema/index.ts";
import { chatIdOf, e164Of } from "../chat-id.ts";
import { NETWORKS } from "../network-traits.ts";
import type { Session, SessionHealth } from "./schemas.ts";
import { limitsFor, type SendLimitsInput } from "../send-limits.ts";

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
    limits: limitsView(row),
    health: row.health ? (JSON.parse(row.health) as SessionHealth) : null,
    createdAt: new Date(row.createdAt).toISOString(),
    updatedAt: new Date(row.updatedAt).toISOString(),
  };
}

/** The limits the session applies: its own settings over its network's defaults (null: none of that kind). */
function limitsView(row: SessionRow): Session["limits"] {
  const l = limitsFor(row.network, row.limits ? (JSON.parse(row.limits) as SendLimitsInput) : undefined);
  return { throughputPerSecond: l.throughputPerSecond, pairIntervalMs: l.pairIntervalMs, pairBurst: l.pairIntervalMs === null ? null : l.pairBurst, messagingLimit: l.messagingLimit ?? "unlimited" };
}
