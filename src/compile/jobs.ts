import { and, asc, desc, eq, gt, inArray, lt, or, sql } from "drizzle-orm";
import type { Db } from "../db/client.ts";
import { compileJobs } from "../db/schema/index.ts";
import { errors } from "../platform/errors.ts";
import { type CompileErrorInfo, FINAL_STATUSES, type JobStatus } from "./schemas.ts";

export type JobRow = typeof compileJobs.$inferSelect;

/** The cron re-sends a job's queue message when nothing has happened to it for this long. */
export const REQUEUE_AFTER_MS = 5 * 60 * 1000;

export const jobPdfKey = (accountId: string, jobId: string) => `jobs/${accountId}/${jobId}.pdf`;
export const jobInputKey = (accountId: string, jobId: string) => `jobs/${accountId}/${jobId}.input.json`;
export const jobPath = (jobId: string) => `/v1/compile/jobs/${jobId}`;

export async function insertJob(db: Db, row: typeof compileJobs.$inferInsert): Promise<JobRow> {
  const [inserted] = await db.insert(compileJobs).values(row).returning();
  return inserted!;
}

export async function deleteJob(db: Db, id: string): Promise<void> {
  await db.delete(compileJobs).where(eq(compileJobs.id, id));
}

/** A job of this account; another account's job is 404 like a missing one. */
export async function getJob(db: Db, accountId: string, id: string): Promise<JobRow> {
  const row = await db.select().from(compileJobs).where(and(eq(compileJobs.accountId, accountId), eq(compileJobs.id, id))).get();
  if (!row) throw errors.notFound("compile job");
  return row;
}

export async function findJob(db: Db, id: string): Promise<JobRow | undefined> {
  return db.select().from(compileJobs).where(eq(compileJobs.id, id)).get();
}

export async function listJobs(db: Db, accountId: string, limit: number, before?: string, status?: JobStatus): Promise<JobRow[]> {
  const conds = [eq(compileJobs.accountId, accountId)];
  if (before) conds.push(lt(compileJobs.id, before));
  if (status) conds.push(eq(compileJobs.status, status));
  return db.select().from(compileJobs).where(and(...conds)).orderBy(desc(compileJobs.id)).limit(limit + 1).all();
}

/**
 * queued -> running, or takes over a running job whose lease expired (its consumer died). The
 * attempt counter goes up and fences every later write of this attempt. Null when the job is
 * finished or another consumer holds a live lease.
 */
export async function claimJob(db: Db, id: string, now: number, leaseMs: number): Promise<JobRow | null> {
  const rows = await db
    .update(compileJobs)
    .set({
      status: "running",
      attempt: sql`${compileJobs.attempt} + 1`,
      leaseExpiresAt: now + leaseMs,
      requeueAt: now + leaseMs + REQUEUE_AFTER_MS,
      startedAt: sql`coalesce(${compileJobs.startedAt}, ${now})`,
    })
    .where(and(eq(compileJobs.id, id), or(eq(compileJobs.status, "queued"), and(eq(compileJobs.status, "running"), lt(compileJobs.leaseExpiresAt, now)))))
    .returning();
  return rows[0] ?? null;
}

const owned = (id: string, attempt: number) => and(eq(compileJobs.id, id), eq(compileJobs.status, "running"), eq(compileJobs.attempt, attempt));

/**
 * Confirms (and extends) a live lease right before the result is written to R2, so a consumer
 * whose lease ran out while it compiled drops its result instead of overwriting the new attempt's.
 */
export async function renewLease(db: Db, id: string, attempt: number, now: number, leaseMs: number): Promise<boolean> {
  const rows = await db
    .update(compileJobs)
    .set({ leaseExpiresAt: now + leaseMs })
    .where(and(owned(id, attempt), gt(compileJobs.leaseExpiresAt, now)))
    .returning({ id: compileJobs.id });
  return rows.length > 0;
}

/** running -> queued after an infrastructure failure, for a retry at `retryAt`. False if the lease was lost. */
export async function releaseJob(db: Db, id: string, attempt: number, retryAt: number): Promise<boolean> {
  const rows = await db.update(compileJobs).set({ status: "queued", leaseExpiresAt: null, requeueAt: retryAt + REQUEUE_AFTER_MS }).where(owned(id, attempt)).returning({ id: compileJobs.id });
  return rows.length > 0;
}

export type JobOutcome =
  | { status: "succeeded"; durationMs: number; pages: number | null; sizeBytes: number }
  | { status: "failed"; error: CompileErrorInfo };

/**
 * running -> succeeded | failed, only by the attempt that holds the job: a late or duplicate
 * consumer gets null and must not act on its result. With a callback URL the callback becomes due.
 */
export async function finishJob(db: Db, id: string, attempt: number, outcome: JobOutcome, now: number): Promise<JobRow | null> {
  const common = { completedAt: now, leaseExpiresAt: null, requeueAt: now + REQUEUE_AFTER_MS, callbackStatus: sql`case when ${compileJobs.callbackUrl} is null then null else 'pending' end` };
  const set =
    outcome.status === "succeeded"
      ? { ...common, status: "succeeded" as const, durationMs: outcome.durationMs, pages: outcome.pages, sizeBytes: outcome.sizeBytes }
      : { ...common, status: "failed" as const, error: JSON.stringify(outcome.error) };
  const rows = await db.update(compileJobs).set(set).where(owned(id, attempt)).returning();
  return rows[0] ?? null;
}

/**
 * queued | running -> cancelled, for this account's job only. The status change is what stops
 * it: a queued job is never claimed, and a running job's consumer can no longer store or finish
 * its result (every write of an attempt requires `running`). Null when the job was not queued or
 * running (missing, another account's, or already finished). With a callback URL the callback
 * becomes due, as for any final status.
 */
export async function cancelJob(db: Db, accountId: string, id: string, now: number): Promise<JobRow | null> {
  const rows = await db
    .update(compileJobs)
    .set({
      status: "cancelled",
      completedAt: now,
      leaseExpiresAt: null,
      requeueAt: now + REQUEUE_AFTER_MS,
      callbackStatus: sql`case when ${compileJobs.callbackUrl} is null then null else 'pending' end`,
    })
    .where(and(eq(compileJobs.accountId, accountId), eq(compileJobs.id, id), inArray(compileJobs.status, ["queued", "running"])))
    .returning();
  return rows[0] ?? null;
}

/** Claims callback attempt n+1 (so duplicate messages do not deliver it twice at once). */
export async function claimCallback(db: Db, id: string, attempts: number, now: number, leaseMs: number): Promise<boolean> {
  const rows = await db
    .update(compileJobs)
    .set({ callbackAttempts: attempts + 1, requeueAt: now + leaseMs })
    .where(and(eq(compileJobs.id, id), eq(compileJobs.callbackStatus, "pending"), eq(compileJobs.callbackAttempts, attempts)))
    .returning({ id: compileJobs.id });
  return rows.length > 0;
}

export async function settleCallback(db: Db, id: string, result: { status: "delivered" | "failed" } | { status: "pending"; retryAt: number }): Promise<void> {
  const requeueAt = result.status === "pending" ? result.retryAt + REQUEUE_AFTER_MS : Date.now() + REQUEUE_AFTER_MS;
  await db.update(compileJobs).set({ callbackStatus: result.status, requeueAt }).where(and(eq(compileJobs.id, id), eq(compileJobs.callbackStatus, "pending")));
}

/**
 * Jobs whose queue message the cron should send again: queued but not picked up, running with an
 * expired lease (consumer crashed), or finished with a callback still pending. Their `requeueAt`
 * moves on so one sweep does not repeat every minute.
 */
export async function takeStaleJobs(db: Db, now: number, limit = 100): Promise<JobRow[]> {
  const due = and(
    lt(compileJobs.requeueAt, now),
    or(
      eq(compileJobs.status, "queued"),
      and(eq(compileJobs.status, "running"), lt(compileJobs.leaseExpiresAt, now)),
      and(inArray(compileJobs.status, [...FINAL_STATUSES]), eq(compileJobs.callbackStatus, "pending")),
    ),
  );
  const rows = await db.select().from(compileJobs).where(due).orderBy(asc(compileJobs.requeueAt), asc(compileJobs.id)).limit(limit).all();
  if (rows.length === 0) return [];
  await db.update(compileJobs).set({ requeueAt: now + REQUEUE_AFTER_MS }).where(inArray(compileJobs.id, rows.map((r) => r.id)));
  return rows;
}
