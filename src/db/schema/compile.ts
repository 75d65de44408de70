import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { accountListIndex, accountRow, counter, createdAt } from "./columns.ts";

/**
 * Async compile jobs. The input lives in R2 (`jobs/<accountId>/<id>.input.json`, it can be 10 MiB),
 * the PDF at `jobs/<accountId>/<id>.pdf`. State machine: queued -> running -> succeeded | failed, and queued | running -> cancelled (DELETE);
 * every transition is a conditional UPDATE on (status, attempt) so a duplicate or late consumer
 * cannot move a job twice (see src/compile/jobs.ts).
 */
export const compileJobs = sqliteTable(
  "compile_jobs",
  {
    ...accountRow(),
    status: text("status", { enum: ["queued", "running", "succeeded", "failed", "cancelled"] }).notNull(),
    engine: text("engine", { enum: ["pdflatex", "xelatex", "lualatex"] }).notNull(),
    /** Compile attempts claimed so far; the claim increments it and fences later writes. */
    attempt: counter("attempt"),
    /** While running: after this instant another consumer may take the job over. */
    leaseExpiresAt: integer("lease_expires_at"),
    /** The cron re-sends the queue message of a queued (or lease-expired) job not picked up by then. */
    requeueAt: integer("requeue_at").notNull(),
    createdAt: createdAt(),
    startedAt: integer("started_at"),
    completedAt: integer("completed_at"),
    durationMs: integer("duration_ms"),
    pages: integer("pages"),
    sizeBytes: integer("size_bytes"),
    /** JSON of the error object (code, message, line, file, errors, log) of a failed job. */
    error: text("error"),
    callbackUrl: text("callback_url"),
    /** Signs the callback; returned once in the 202. */
    callbackSecret: text("callback_secret"),
    callbackStatus: text("callback_status", { enum: ["pending", "delivered", "failed"] }),
    callbackAttempts: counter("callback_attempts"),
  },
  (t) => [accountListIndex("compile_jobs_account_idx", t), index("compile_jobs_requeue_idx").on(t.status, t.requeueAt)],
);
