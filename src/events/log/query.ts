/**
 * The keyset query behind GET /api/events: newest first by id (ids are time-ordered, so `since`,
 * `until` and the cursor are id bounds). Each filter combination reads one named index (INDEXED BY,
 * so a missing index is an error, not a silent full scan), and a page costs the rows in that index's
 * range up to `limit + 1` matches (test/workers/events/events-log.cost.test.ts checks the plans):
 *
 * - no filter, or only times:  events_account_id_idx (account_id, id)
 * - `type`:                    events_account_type_idx (account_id, type, id)
 * - `sessionId` (and `type`):  events_account_session_idx (account_id, session_id, id); a type is
 *                              then checked per row of that session
 * - `delivery`:                deliveries_account_status_event_idx (account_id, status, event_id) on
 *                              webhook_deliveries; `type` / `sessionId` are then checked per event
 *                              by its primary key
 */
export interface EventPageFilter {
  accountId: string;
  /** Smallest id included. */
  fromId: string;
  /** Ids below this only (the cursor, or `until`). */
  beforeId: string;
  type?: string;
  sessionId?: string;
  delivery?: "pending" | "succeeded" | "failed";
  /** Rows to fetch (the page size + 1, to know whether there is a next page). */
  take: number;
}

export function eventPageQuery(f: EventPageFilter): { sql: string; params: (string | number)[] } {
  const params: (string | number)[] = [f.accountId, f.fromId, f.beforeId];
  const bind = (v: string | number) => `?${params.push(v)}`;
  if (f.delivery) {
    const status = bind(f.delivery);
    const more = [f.type !== undefined ? `e.type = ${bind(f.type)}` : null, f.sessionId !== undefined ? `e.session_id = ${bind(f.sessionId)}` : null].filter(Boolean);
    // A scalar subquery, not EXISTS: SQLite turns EXISTS into a join that walks the account's events
    // by range; this stays one primary-key probe per candidate.
    const join = more.length ? ` AND (SELECT e.id FROM events e WHERE e.id = d.event_id AND e.account_id = d.account_id AND ${more.join(" AND ")}) IS NOT NULL` : "";
    return {
      sql: `SELECT d.event_id AS id FROM webhook_deliveries d INDEXED BY deliveries_account_status_event_idx WHERE d.account_id = ?1 AND d.status = ${status} AND d.event_id >= ?2 AND d.event_id < ?3${join} GROUP BY d.event_id ORDER BY d.event_id DESC LIMIT ${bind(f.take)}`,
      params,
    };
  }
  let index = "events_account_id_idx";
  const conds = ["account_id = ?1", "id >= ?2", "id < ?3"];
  if (f.sessionId !== undefined) {
    index = "events_account_session_idx";
    conds.push(`session_id = ${bind(f.sessionId)}`);
  }
  if (f.type !== undefined) {
    if (f.sessionId === undefined) index = "events_account_type_idx";
    conds.push(`type = ${bind(f.type)}`);
  }
  return { sql: `SELECT id FROM events INDEXED BY ${index} WHERE ${conds.join(" AND ")} ORDER BY id DESC LIMIT ${bind(f.take)}`, params };
}

/**
 * GET /api/events?delivery=succeeded reads a second source beside the deliveries: events whose
 * first attempts succeeded keep those outcomes on their row (events/folded.ts), found through the
 * partial index events_account_delivered_idx (account_id, id) WHERE delivered IS NOT NULL; `type` /
 * `sessionId` are checked per row. The service merges both pages by id.
 */
export function foldedSuccessPageQuery(f: Omit<EventPageFilter, "delivery">): { sql: string; params: (string | number)[] } {
  const params: (string | number)[] = [f.accountId, f.fromId, f.beforeId];
  const bind = (v: string | number) => `?${params.push(v)}`;
  const conds = ["account_id = ?1", "delivered IS NOT NULL", "id >= ?2", "id < ?3"];
  if (f.type !== undefined) conds.push(`type = ${bind(f.type)}`);
  if (f.sessionId !== undefined) conds.push(`session_id = ${bind(f.sessionId)}`);
  return { sql: `SELECT id FROM events INDEXED BY events_account_delivered_idx WHERE ${conds.join(" AND ")} ORDER BY id DESC LIMIT ${bind(f.take)}`, params };
}
