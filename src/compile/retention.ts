import { itemsPerStatement } from "../platform/d1.ts";
import { chunk } from "../platform/batching.ts";
import { daysAgo, oldestExpired, retention } from "../platform/retention.ts";
import { jobInputKey, jobPdfKey } from "./jobs.ts";
import { directoryD1 } from "../platform/shards.ts";

/** Ids per DELETE, with room for the statement's own parameters. */
const IDS_PER_DELETE = itemsPerStatement(1, 10);

/**
 * Cron: finished compile jobs past their retention go with their input and PDF in R2. The objects
 * are deleted first: if that fails the rows stay and the next tick tries again, so no PDF is ever
 * left without the row that names it.
 */
export async function purgeExpiredJobs(env: Env, now: number): Promise<number> {
  const days = retention(env).RETENTION_COMPILE_JOBS_DAYS;
  if (days === null) return 0;
  const rows = await oldestExpired<{ id: string; account_id: string }>(
    directoryD1(env),
    { table: "compile_jobs", prefix: "job", before: daysAgo(now, days), where: "status IN ('succeeded', 'failed', 'cancelled') AND (callback_status IS NULL OR callback_status <> 'pending')" },
    "id, account_id",
  );
  if (rows.length === 0) return 0;
  await env.FILES.delete(rows.flatMap((r) => [jobPdfKey(r.account_id, r.id), jobInputKey(r.account_id, r.id)]));
  for (const part of chunk(rows, IDS_PER_DELETE)) {
    await directoryD1(env).prepare(`DELETE FROM compile_jobs WHERE id IN (${part.map(() => "?").join(", ")})`)
      .bind(...part.map((r) => r.id))
      .run();
  }
  return rows.length;
}
