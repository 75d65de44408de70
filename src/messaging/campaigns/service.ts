import { and, asc, desc, eq, inArray, lt, sql } from "drizzle-orm";
import { campaigns, contacts } from "../../db/schema/index.ts";
import { assertEventFits } from "../../events/emit.ts";
import { eachItem } from "../../platform/cron-loop.ts";
import { errors } from "../../platform/errors.ts";
import { newId } from "../../platform/ids.ts";
import { decodeCursor, IdCursor, SeqCursor, toPage } from "../../platform/pagination.ts";
import { checkTargetUrl } from "../../platform/safe-url.ts";
import { addressOfContactKey, chatIdOf, phoneOfContactKey } from "../chat-id.ts";
import { phonesByUserIds } from "../contacts/service.ts";
import { deletePendingOfCampaignStatement, messagesSql, recipientsWithMessages } from "../store/campaigns.ts";
import { ID_CHUNK } from "../store/reads.ts";
import { chunk } from "../../platform/batching.ts";
import { findSession } from "../sessions/service.ts";
import { sessionStub } from "../sessions/session-do.ts";
import type { SessionStatus } from "../sessions/schemas.ts";
import { launch } from "./audience.ts";
import { maybeComplete } from "./completion.ts";
import { allBlocks, enqueueBlocks, remainingBlocks } from "./fanout.ts";
import { nextStatus, type CampaignAction, type CampaignStatus } from "./lifecycle.ts";
import { pacingOf, toCampaign, type CampaignRow } from "./mapper.ts";
import type { Audience, Campaign, CampaignMessage, CreateCampaignBody, Recipient, RecipientStatus, UpdateCampaignBody } from "./schemas.ts";
import { MAX_CHARGE_CATEGORIES, statsOf } from "./stats.ts";
import { checkTemplateSend } from "../templates/service.ts";
import { config } from "../../platform/config.ts";
import { iso } from "../../platform/time.ts";
import { accountShard, type Shard } from "../../platform/shards.ts";

async function present(env: Env, row: CampaignRow): Promise<Campaign> {
  return toCampaign(row, (await statsOf(env, [row])).get(row.id)!, Date.now(), await finishOf(env, row));
}

/** When the session's queue says a running campaign finishes (pacing and limits); null when it cannot say. */
async function finishOf(env: Env, row: CampaignRow): Promise<number | null> {
  if (row.status !== "running") return null;
  return sessionStub(env, row.sessionId).campaignFinish(row.accountId, row.id).catch(() => null);
}

async function loadRow(env: Env, accountId: string, id: string): Promise<CampaignRow> {
  const row = await (await accountShard(env, accountId)).db.select().from(campaigns).where(and(eq(campaigns.accountId, accountId), eq(campaigns.id, id))).get();
  if (!row) throw errors.notFound("campaign");
  return row;
}

/** 409 unless `action` is allowed from the campaign's state. */
function ensureAllowed(row: CampaignRow, action: CampaignAction): CampaignStatus {
  const next = nextStatus(row.status, action);
  if (!next) throw errors.conflict("invalid_campaign_state", `A ${row.status} campaign cannot ${action === "update" ? "be changed" : action}.`, { status: row.status });
  return next;
}

async function ensureSessionOwned(env: Env, accountId: string, sessionId: string): Promise<void> {
  if (!(await findSession(env, accountId, sessionId))) throw errors.invalidRequest("sessionId is not a session of this account.", [{ path: "sessionId", message: "no such session" }]);
}

async function ensureSessionWorking(env: Env, accountId: string, sessionId: string): Promise<void> {
  const row = await findSession(env, accountId, sessionId);
  if (row?.status !== "WORKING") {
    throw errors.sessionNotWorking(sessionId, row?.status ?? null);
  }
}

/** Contact ids and BSUIDs must be this account's contacts': unknown ones are a 400 naming them (at most 10). */
async function ensureContactsOwned(env: Env, accountId: string, audience: Audience): Promise<void> {
  const users = [...new Set(audience.userIds ?? [])];
  if (users.length > 0) {
    const found = await phonesByUserIds(await accountShard(env, accountId), accountId, users);
    const unknown = users.filter((u) => !found.has(u));
    if (unknown.length) {
      throw errors.invalidRequest(`audience.userIds has ${unknown.length} BSUID(s) no contact has: ${unknown.slice(0, 10).join(", ")}.`, unknown.slice(0, 10).map((u) => ({ path: "audience.userIds", message: `unknown BSUID ${u}` })));
    }
  }
  const ids = [...new Set(audience.contactIds ?? [])];
  if (ids.length === 0) return;
  const found = new Set<string>();
  for (const part of chunk(ids, ID_CHUNK)) {
    const rows = await (await accountShard(env, accountId)).db.select({ id: contacts.id }).from(contacts).where(and(eq(contacts.accountId, accountId), inArray(contacts.id, part))).all();
    for (const r of rows) found.add(r.id);
  }
  const unknown = ids.filter((id) => !found.has(id));
  if (unknown.length) {
    throw errors.invalidRequest(`audience.contactIds has ${unknown.length} unknown contact id(s): ${unknown.slice(0, 10).join(", ")}.`, unknown.slice(0, 10).map((id) => ({ path: "audience.contactIds", message: `unknown contact ${id}` })));
  }
}

function ensureMessage(env: Env, message: CampaignMessage): CampaignMessage {
  if (!("media" in message)) return message;
  if ((message.type === "audio" || message.type === "sticker") && message.caption) throw errors.invalidRequest(`${message.type === "audio" ? "Audio messages" : "Stickers"} cannot have a caption.`, [{ path: "message.caption", message: `not allowed for ${message.type}` }]);
  const check = checkTargetUrl(message.media.url, { allowLoopback: config(env).allowLoopbackUrls });
  if (!check.ok) throw errors.invalidRequest(`message.media.url ${check.reason}.`, [{ path: "message.media.url", message: check.reason }]);
  return { ...message, media: { url: check.url.toString() } };
}

/** Stats as large as they can get: the campaign's event is measured at its largest. */
const LARGEST_STATS = { total: Number.MAX_SAFE_INTEGER, pending: 0, sent: Number.MAX_SAFE_INTEGER, delivered: Number.MAX_SAFE_INTEGER, read: Number.MAX_SAFE_INTEGER, failed: Number.MAX_SAFE_INTEGER, skipped: Number.MAX_SAFE_INTEGER,
  charges: { billable: Number.MAX_SAFE_INTEGER, byCategory: Object.fromEntries(Array.from({ length: MAX_CHARGE_CATEGORIES }, (_, i) => [`${i}`.padEnd(64, "x"), Number.MAX_SAFE_INTEGER])) },
};

/**
 * A campaign ends by publishing itself in `campaign.completed`. If it could never fit in an event
 * (e.g. tens of thousands of contact ids) it is refused now with 413 `event_too_large`, rather than
 * completing later without its announcement.
 */
function ensureAnnounceable(row: CampaignRow): void {
  const now = Date.now();
  const completed: CampaignRow = { ...row, status: "completed", statusReason: null, startedAt: now, completedAt: now, cancelledAt: now, updatedAt: now };
  assertEventFits({ type: "campaign.completed", accountId: row.accountId, sessionId: row.sessionId, data: toCampaign(completed, LARGEST_STATS, now) });
}

/** A template campaign must fit its session's synced, APPROVED template: at creation and again at start (it may have changed since). */
async function ensureTemplateSendable(env: Env, accountId: string, sessionId: string, message: CampaignMessage): Promise<void> {
  if ("template" in message) await checkTemplateSend(env, accountId, sessionId, message.template, "message.template");
}

export async function createCampaign(env: Env, accountId: string, body: CreateCampaignBody): Promise<Campaign> {
  const message = ensureMessage(env, body.message);
  const now = Date.now();
  const values: CampaignRow = {
    id: newId("cmp", now),
    accountId,
    sessionId: body.sessionId,
    name: body.name,
    status: "draft",
    statusReason: null,
    message: JSON.stringify(message),
    audience: JSON.stringify(body.audience),
    scheduledAt: body.scheduledAt ? Date.parse(body.scheduledAt) : null,
    pacing: body.pacing ? JSON.stringify(body.pacing) : null,
    startedAt: null,
    completedAt: null,
    cancelledAt: null,
    kickedAt: null,
    completionEventId: null,
    total: 0,
    skipped: 0,
    startToken: null,
    createdAt: now,
    updatedAt: now,
  };
  ensureAnnounceable(values);
  await ensureSessionOwned(env, accountId, body.sessionId);
  await ensureContactsOwned(env, accountId, body.audience);
  await ensureTemplateSendable(env, accountId, body.sessionId, message);
  const [row] = await (await accountShard(env, accountId)).db.insert(campaigns).values(values).returning();
  return present(env, row!);
}

export async function getCampaign(env: Env, accountId: string, id: string): Promise<Campaign> {
  return present(env, await loadRow(env, accountId, id));
}

export async function listCampaigns(env: Env, accountId: string, q: { status?: CampaignStatus; limit: number; cursor?: string }): Promise<{ data: Campaign[]; nextCursor: string | null }> {
  const cursor = decodeCursor(q.cursor, IdCursor);
  const rows = await (await accountShard(env, accountId)).db
    .select()
    .from(campaigns)
    .where(and(eq(campaigns.accountId, accountId), q.status ? eq(campaigns.status, q.status) : undefined, cursor ? lt(campaigns.id, cursor.id) : undefined))
    .orderBy(desc(campaigns.id))
    .limit(q.limit + 1);
  const page = toPage(rows, q.limit, (r) => ({ id: r.id }));
  const stats = await statsOf(env, page.data);
  const finish = await Promise.all(page.data.map((r) => finishOf(env, r)));
  return { data: page.data.map((r, i) => toCampaign(r, stats.get(r.id)!, Date.now(), finish[i])), nextCursor: page.nextCursor };
}

export async function updateCampaign(env: Env, accountId: string, id: string, patch: UpdateCampaignBody): Promise<Campaign> {
  const row = await loadRow(env, accountId, id);
  ensureAllowed(row, "update");
  const set: Partial<CampaignRow> = { updatedAt: Date.now() };
  if (patch.name !== undefined) set.name = patch.name;
  if (patch.sessionId !== undefined) {
    await ensureSessionOwned(env, accountId, patch.sessionId);
    set.sessionId = patch.sessionId;
  }
  if (patch.message !== undefined) set.message = JSON.stringify(ensureMessage(env, patch.message));
  if (patch.audience !== undefined) {
    await ensureContactsOwned(env, accountId, patch.audience);
    set.audience = JSON.stringify(patch.audience);
  }
  if (patch.scheduledAt !== undefined) set.scheduledAt = patch.scheduledAt === null ? null : Date.parse(patch.scheduledAt);
  if (patch.pacing !== undefined) set.pacing = patch.pacing === null ? null : JSON.stringify(patch.pacing);
  ensureAnnounceable({ ...row, ...set });
  const [updated] = await (await accountShard(env, accountId)).db
    .update(campaigns)
    .set(set)
    .where(and(eq(campaigns.accountId, accountId), eq(campaigns.id, id), eq(campaigns.status, "draft")))
    .returning();
  if (!updated) return updateCampaign(env, accountId, id, patch); // state changed meanwhile: answers the 409
  return present(env, updated);
}

/** Resolves the audience, marks the campaign running and puts its recipients on SEND_QUEUE. */
async function run(env: Env, row: CampaignRow, opts: { fromTimer?: boolean } = {}): Promise<void> {
  const shard = await accountShard(env, row.accountId);
  const launched = await launch(shard, row);
  if (!launched) return; // another start won
  // An early start forgets the DO's timer (the DO drops a timer that fired by itself).
  if (row.status === "scheduled" && !opts.fromTimer) await sessionStub(env, row.sessionId).cancelCampaignStart(row.id);
  await enqueueBlocks(env, row, allBlocks(launched.total));
  if (launched.total === launched.skipped) await maybeComplete(env, shard, row.id);
}

/**
 * draft -> scheduled (scheduledAt in the future: the session's DO alarm starts it then, the cron is
 * the backstop) or -> running; scheduled -> running (early). Idempotent when already running.
 */
export async function startCampaign(env: Env, accountId: string, id: string): Promise<Campaign> {
  const row = await loadRow(env, accountId, id);
  if (row.status === "running") return present(env, row);
  ensureAllowed(row, "start");
  await ensureTemplateSendable(env, accountId, row.sessionId, JSON.parse(row.message) as CampaignMessage);
  if (row.status === "draft" && row.scheduledAt !== null && row.scheduledAt > Date.now()) {
    await ensureSessionOwned(env, accountId, row.sessionId);
    const [scheduled] = await (await accountShard(env, accountId)).db
      .update(campaigns)
      .set({ status: "scheduled", updatedAt: Date.now() })
      .where(and(eq(campaigns.accountId, accountId), eq(campaigns.id, id), eq(campaigns.status, "draft")))
      .returning();
    if (scheduled) await sessionStub(env, row.sessionId).scheduleCampaignStart(id, row.scheduledAt);
    return getCampaign(env, accountId, id);
  }
  await ensureSessionWorking(env, accountId, row.sessionId);
  await run(env, row);
  return getCampaign(env, accountId, id);
}

/** A scheduled campaign whose time has come (the DO alarm or the cron): starts it once. */
export async function startDue(env: Env, shard: Shard, campaignId: string, now = Date.now(), opts: { fromTimer?: boolean } = {}): Promise<void> {
  const row = await shard.db.select().from(campaigns).where(eq(campaigns.id, campaignId)).get();
  if (!row || row.status !== "scheduled" || (row.scheduledAt ?? 0) > now + 1000) return;
  // A session that is not WORKING pauses the campaign with the reason when its sends come due.
  await run(env, row, opts);
}

export async function pauseCampaign(env: Env, accountId: string, id: string): Promise<Campaign> {
  const row = await loadRow(env, accountId, id);
  if (row.status === "paused") return present(env, row);
  ensureAllowed(row, "pause");
  // Hold first: from here the DO sends nothing more of this campaign.
  await sessionStub(env, row.sessionId).holdCampaign(id);
  await (await accountShard(env, accountId)).db
    .update(campaigns)
    .set({ status: "paused", statusReason: null, updatedAt: Date.now() })
    .where(and(eq(campaigns.accountId, accountId), eq(campaigns.id, id), eq(campaigns.status, "running")));
  return getCampaign(env, accountId, id);
}

export async function resumeCampaign(env: Env, accountId: string, id: string): Promise<Campaign> {
  const row = await loadRow(env, accountId, id);
  if (row.status === "running") return present(env, row);
  ensureAllowed(row, "resume");
  await ensureSessionWorking(env, accountId, row.sessionId);
  const now = Date.now();
  const [resumed] = await (await accountShard(env, accountId)).db
    .update(campaigns)
    .set({ status: "running", statusReason: null, kickedAt: now, updatedAt: now })
    .where(and(eq(campaigns.accountId, accountId), eq(campaigns.id, id), eq(campaigns.status, "paused")))
    .returning();
  if (resumed) {
    const pacing = pacingOf(resumed);
    await sessionStub(env, row.sessionId).releaseCampaign(id, { campaignId: id, ...(pacing ? { perMinute: pacing.perMinute, jitterPct: pacing.jitterPct } : {}) });
    const shard = await accountShard(env, accountId);
    await enqueueBlocks(env, resumed, await remainingBlocks(shard, id));
    await maybeComplete(env, shard, id);
  }
  return getCampaign(env, accountId, id);
}

/**
 * Any state before completed -> cancelled. Sends still queued in the DO are dropped, their pending
 * messages deleted, and every recipient not sent is `skipped: cancelled` (one transaction, so the
 * stats still add up). Sends in the DO's hands at that instant finish.
 */
export async function cancelCampaign(env: Env, accountId: string, id: string): Promise<Campaign> {
  const row = await loadRow(env, accountId, id);
  if (row.status === "cancelled") return present(env, row);
  ensureAllowed(row, "cancel");
  const now = Date.now();
  const [cancelled] = await (await accountShard(env, accountId)).db
    .update(campaigns)
    .set({ status: "cancelled", statusReason: null, cancelledAt: now, updatedAt: now })
    .where(and(eq(campaigns.accountId, accountId), eq(campaigns.id, id), inArray(campaigns.status, ["draft", "scheduled", "running", "paused"])))
    .returning();
  if (!cancelled) return cancelCampaign(env, accountId, id); // completed meanwhile: answers the 409
  if (row.status === "scheduled") await sessionStub(env, row.sessionId).cancelCampaignStart(id);
  if (row.status === "running" || row.status === "paused") {
    const { inFlight } = await sessionStub(env, row.sessionId).dropCampaign(id);
    const shard = await accountShard(env, accountId);
    const { d1 } = shard;
    await d1.batch([
      deletePendingOfCampaignStatement(shard, id, accountId, inFlight.slice(0, ID_CHUNK)),
      d1.prepare(
        `UPDATE campaign_recipients SET status = 'skipped', reason = 'cancelled', message_id = NULL
          WHERE campaign_id = ?1 AND (status = 'pending' OR (status = 'queued' AND NOT ${messagesSql.exists("campaign_recipients.message_id")}))`,
      ).bind(id),
      d1.prepare("UPDATE campaigns SET skipped = (SELECT count(*) FROM campaign_recipients WHERE campaign_id = ?1 AND status = 'skipped') WHERE id = ?1").bind(id),
    ]);
  }
  return getCampaign(env, accountId, id);
}

/**
 * The session left WORKING (or campaign sends came due while it was not): its running campaigns
 * pause with the reason. Answers the ids paused, which the DO holds.
 */
export async function pauseForSession(env: Env, accountId: string, sessionId: string, status: SessionStatus, reason: string | null, ids?: string[]): Promise<string[]> {
  const statusReason = `session_${status.toLowerCase()}${reason ? `: ${reason}` : ""}`;
  const rows = await (await accountShard(env, accountId)).db
    .update(campaigns)
    .set({ status: "paused", statusReason, updatedAt: Date.now() })
    .where(and(eq(campaigns.accountId, accountId), eq(campaigns.sessionId, sessionId), eq(campaigns.status, "running"), ids ? inArray(campaigns.id, ids.slice(0, ID_CHUNK)) : undefined))
    .returning({ id: campaigns.id });
  return rows.map((r) => r.id);
}

// ---- recipients ------------------------------------------------------------------------------

export async function listRecipients(env: Env, accountId: string, id: string, q: { status?: RecipientStatus; limit: number; cursor?: string }): Promise<{ data: Recipient[]; nextCursor: string | null }> {
  await loadRow(env, accountId, id);
  const cursor = decodeCursor(q.cursor, SeqCursor);
  const rows = await recipientsWithMessages(await accountShard(env, accountId), accountId, id, { afterSeq: Number(cursor?.seq ?? 0), limit: q.limit + 1, status: q.status });
  const page = toPage(rows, q.limit, (r) => ({ seq: r.seq }));
  return {
    data: page.data.map((r) => ({
      seq: r.seq,
      contactId: r.contact_id,
      phone: phoneOfContactKey(r.phone),
      chatId: chatIdOf(addressOfContactKey(r.phone)),
      name: r.name,
      status: r.live,
      reason: r.live === "skipped" ? r.reason : r.live === "failed" ? r.error_code : null,
      error: r.live === "failed" && r.error_code ? { code: r.error_code, message: r.error_message ?? "" } : null,
      messageId: r.message_id,
      sentAt: iso(r.sent_at),
      deliveredAt: iso(r.delivered_at),
      readAt: iso(r.read_at),
    })),
    nextCursor: page.nextCursor,
  };
}

// ---- cron -------------------------------------------------------------------------------------

/** Running campaigns whose jobs were lost (e.g. dead-lettered) get their remaining blocks again. */
export async function kickStalled(env: Env, shard: Shard, now: number): Promise<void> {
  const stale = await shard.db
    .select()
    .from(campaigns)
    .where(and(eq(campaigns.status, "running"), lt(campaigns.kickedAt, now - 120_000)))
    .orderBy(asc(campaigns.kickedAt), asc(campaigns.id))
    .limit(50)
    .all();
  await eachItem("campaigns.kick-stalled", stale, (c) => c.id, async (c) => {
    // Kicked first: a campaign that fails here waits its turn again instead of heading every batch.
    await shard.db.update(campaigns).set({ kickedAt: now }).where(eq(campaigns.id, c.id));
    if (await maybeComplete(env, shard, c.id)) return;
    const blocks = await remainingBlocks(shard, c.id, { unclaimedOnly: true });
    if (blocks.length) await enqueueBlocks(env, c, blocks);
  });
}

export async function startDueScheduled(env: Env, shard: Shard, now: number): Promise<void> {
  const due = await shard.db
    .select({ id: campaigns.id })
    .from(campaigns)
    .where(and(eq(campaigns.status, "scheduled"), sql`${campaigns.scheduledAt} <= ${now}`))
    .orderBy(asc(campaigns.scheduledAt), asc(campaigns.id))
    .limit(50)
    .all();
  await eachItem("campaigns.start-due", due, (d) => d.id, (d) => startDue(env, shard, d.id, now));
}
