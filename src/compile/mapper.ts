import { iso } from "../platform/time.ts";
import { jobPath, type JobRow } from "./jobs.ts";
import type { CompileErrorInfo, CompileJob } from "./schemas.ts";

export function toJobView(row: JobRow): CompileJob {
  return {
    id: row.id,
    status: row.status,
    engine: row.engine,
    createdAt: iso(row.createdAt)!,
    startedAt: iso(row.startedAt),
    completedAt: iso(row.completedAt),
    durationMs: row.durationMs,
    pages: row.pages,
    sizeBytes: row.sizeBytes,
    attempts: row.attempt,
    ...(row.error ? { error: JSON.parse(row.error) as CompileErrorInfo } : {}),
    statusUrl: jobPath(row.id),
    pdfUrl: `${jobPath(row.id)}/pdf`,
    outputUrl: `${jobPath(row.id)}/output`,
    callbackUrl: row.callbackUrl,
    callbackStatus: row.callbackStatus,
  };
}
