import { and, eq, inArray } from "drizzle-orm";
import { events, webhooks } from "../../db/schema/index.ts";
import { foldedOf, type FoldedDelivery } from "../folded.ts";
import { errors } from "../../platform/errors.ts";
import { decodeCursor, IdCursor, toPage, type Page } from "../../platform/pagination.ts";
import { daysAgo, idAt, retention } from "../../platform/retention.ts";
import { eventPageQuery, foldedSuccessPageQuery } from "./query.ts";
import { accountShard } from "../../platform/shards.ts";
import type { EventDeliveryView, EventListInput, LoggedEventView } from "./schemas.ts";
import { toEventDeliveryView, toEventView, type EventDeliveryRow } from "./mapper.ts";

function foldedEventDelivery(eventId: string, f: FoldedDelivery): EventDeliveryRow {
  return { id: f.id, webhook_id: f.w, event_id: eventId, status: "succeeded", attempts: 1, last_status_code: f.c, next_attempt_at: null, updated_at: f.t };
}

/** When event retention is off (rows kept forever), lists still reach back only this far. */
export const EVENTS_MAX_DAYS = 30;


function windowStart(env: Env, now: number): number {
  return daysAgo(now, retention(env).RETENTION_EVENTS_DAYS ?? EVENTS_MAX_DAYS);
}

/** `since`/`until` as instants inside the window; a bound outside it is a 400 naming it, never a silent clamp. */
function timeBounds(env: Env, q: EventListInput, now: number): { from: number; to: number } {
  const start = windowStart(env, now);
  const from = q.since ? Date.parse(q.since) : start;
  const to = q.until ? Date.parse(q.until) : now + 1;
  if (from < start) throw errors.invalidRequest(`\`since\` is older than events are kept (from ${new Date(start).toISOString()}).`, [{ path: "since", message: "outside the retention window" }]);
  if (to < from) throw errors.invalidRequest("`until` is before `since`.", [{ path: "until", message: "must not be before since" }]);
  return { from, to };
}

export async function listEvents(env: Env, accountId: string, q: EventListInput, now = Date.now()): Promise<Page<LoggedEventView>> {
  const { from, to } = timeBounds(env, q, now);
  const untilId = idAt("evt", to);
  const cursorId = decodeCursor(q.cursor, IdCursor)?.id;
  const { sql, params } = eventPageQuery({
    accountId,
    fromId: idAt("evt", from),
    beforeId: cursorId !== undefined && cursorId < untilId ? cursorId : untilId,
    type: q.type,
    sessionId: q.sessionId,
    delivery: q.delivery,
    take: q.limit + 1,
  });
  const d1 = (await accountShard(env, accountId)).d1;
  let ids = (await d1.prepare(sql).bind(...params).all<{ id: string }>()).results.map((r) => r.id);
  if (q.delivery === "succeeded") {
    // Successes folded on their event rows (events/folded.ts) are a second source, merged by id.
    const folded = foldedSuccessPageQuery({ accountId, fromId: idAt("evt", from), beforeId: cursorId !== undefined && cursorId < untilId ? cursorId : untilId, type: q.type, sessionId: q.sessionId, take: q.limit + 1 });
    const more = (await d1.prepare(folded.sql).bind(...folded.params).all<{ id: string }>()).results.map((r) => r.id);
    ids = [...new Set([...ids, ...more])].sort((a, b) => (a < b ? 1 : -1)).slice(0, q.limit + 1);
  }
  const page = toPage(ids, q.limit, (id) => ({ id }));
  return { data: await withDeliveries(env, accountId, page.data), nextCursor: page.nextCursor };
}

export async function getEvent(env: Env, accountId: string, id: string): Promise<LoggedEventView> {
  const [event] = await withDeliveries(env, accountId, [id]);
  if (!event) throw errors.notFound("event");
  return event;
}

/** The events of `ids` (this account's only), in that order, each with its deliveries: two reads. */
async function withDeliveries(env: Env, accountId: string, ids: string[]): Promise<LoggedEventView[]> {
  if (ids.length === 0) return [];
  const { db, d1 } = await accountShard(env, accountId);
  const [rows, hooks] = await db.batch([db.select().from(events).where(and(eq(events.accountId, accountId), inArray(events.id, ids))), db.select({ id: webhooks.id }).from(webhooks).where(eq(webhooks.accountId, accountId))]);
  // INDEXED BY: without statistics SQLite would rather scan the account's deliveries than probe per event.
  const marks = ids.map((_, i) => `?${i + 2}`).join(",");
  const deliveries = await d1.prepare(
    `SELECT id, webhook_id, event_id, status, attempts, last_status_code, next_attempt_at, updated_at FROM webhook_deliveries INDEXED BY deliveries_event_webhook_uq WHERE event_id IN (${marks}) AND account_id = ?1 ORDER BY id`,
  )
    .bind(accountId, ...ids)
    .all<EventDeliveryRow>();
  const byEvent = new Map<string, EventDeliveryView[]>();
  for (const d of deliveries.results) {
    const view = toEventDeliveryView(d);
    const list = byEvent.get(d.event_id);
    if (list) list.push(view);
    else byEvent.set(d.event_id, [view]);
  }
  // Folded successes (events/folded.ts), of webhooks that still exist (deleting one deletes its log).
  const live = new Set(hooks.map((h) => h.id));
  for (const row of rows) {
    const folded = foldedOf(row.delivered).filter((f) => live.has(f.w)).map((f) => toEventDeliveryView(foldedEventDelivery(row.id, f)));
    if (folded.length > 0) byEvent.set(row.id, [...(byEvent.get(row.id) ?? []), ...folded].sort((a, b) => (a.id < b.id ? -1 : 1)));
  }
  const byId = new Map(rows.map((r) => [r.id, r]));
  return ids.flatMap((id) => {
    const row = byId.get(id);
    return row ? [toEventView(row, byEvent.get(id) ?? [])] : [];
  });
}
