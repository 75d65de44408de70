/** Outbound message states: only ever move forward (docs/contracts.md §3). `failed` is terminal. */
export const MESSAGE_STATUSES = ["pending", "sent", "delivered", "read", "failed", "received"] as const;
export type MessageStatus = (typeof MESSAGE_STATUSES)[number];

const RANK: Record<MessageStatus, number> = { pending: 0, sent: 1, delivered: 2, read: 3, failed: 4, received: 4 };

/**
 * Whether a message in `from` may move to `to`. Receipts can arrive out of order (read before
 * delivered), so a later status may skip steps, but an earlier one never overrides. A failure after
 * delivery is ignored: the person has the message.
 */
export function canAdvance(from: MessageStatus, to: MessageStatus): boolean {
  if (from === "failed" || from === "received") return false;
  if (to === "failed") return from === "pending" || from === "sent";
  return RANK[to] > RANK[from];
}

/** The statuses passed on the way from `from` to `to` (for events and timestamps), `to` included. */
export function statusesBetween(from: MessageStatus, to: MessageStatus): MessageStatus[] {
  if (to === "failed") return ["failed"];
  const path: MessageStatus[] = [];
  for (const s of ["sent", "delivered", "read"] as const) if (RANK[s] > RANK[from] && RANK[s] <= RANK[to]) path.push(s);
  return path;
}

/** When a `delivered` step passed on the way to `read` at `at` took place: the caller's time if it knows one, never after the read. */
export function deliveredStamp(at: number, deliveredAt?: number): number {
  return Math.min(deliveredAt ?? at, at);
}
