import { getDb } from "../db/client.ts";
import { ApiError } from "../platform/errors.ts";
import { createRouter } from "../platform/openapi.ts";
import { addTiming } from "../platform/server-timing.ts";
import { decodeCursor, IdCursor, toPage } from "../platform/pagination.ts";
import { getJob, jobPdfKey, jobPath, listJobs, toJobView } from "./jobs.ts";
import { compileAsyncRoute, compileSyncRoute, getJobPdfRoute, getJobRoute, listJobsRoute } from "./routes.ts";
import { compileSync, submitJob } from "./service.ts";

export const compileRoutes = createRouter()
  .openapi(compileSyncRoute, async (c) => {
    const r = await compileSync(c.env, c.executionCtx, c.get("auth").accountId, c.req.valid("json"));
    for (const [name, ms] of Object.entries(r.timing)) addTiming(c, name, ms);
    const headers: Record<string, string> = {
      "Content-Type": "application/pdf",
      "Content-Length": String(r.size),
      ETag: `"${r.etag}"`,
      "X-Cache": r.cache,
      "X-Compile-Duration-Ms": String(r.durationMs),
      "X-Engine": r.engine,
      "Cache-Control": "private, no-store",
    };
    if (r.pages !== null) headers["X-Compile-Pages"] = String(r.pages);
    if (r.preamble !== null) headers["X-Compile-Preamble"] = r.preamble;
    return c.body(r.body, 200, headers);
  })
  .openapi(compileAsyncRoute, async (c) => {
    const { row, callbackSecret } = await submitJob(c.env, c.get("auth").accountId, c.req.valid("json"));
    c.header("Location", jobPath(row.id));
    return c.json({ ...toJobView(row), ...(callbackSecret ? { callbackSecret } : {}) }, 202);
  })
  .openapi(getJobRoute, async (c) => {
    const row = await getJob(getDb(c.env.DB), c.get("auth").accountId, c.req.valid("param").id);
    return c.json(toJobView(row), 200);
  })
  .openapi(getJobPdfRoute, async (c) => {
    const row = await getJob(getDb(c.env.DB), c.get("auth").accountId, c.req.valid("param").id);
    if (row.status === "failed") throw new ApiError(409, "job_failed", "This job failed, so it has no PDF; its `error` says why.", { status: row.status });
    if (row.status !== "succeeded") throw new ApiError(404, "pdf_not_ready", `The job is ${row.status}; its PDF exists once it has succeeded.`, { status: row.status });
    const obj = await c.env.FILES.get(jobPdfKey(row.accountId, row.id));
    if (!obj) throw new ApiError(404, "pdf_expired", "This job's PDF is no longer stored.");
    return c.body(obj.body, 200, {
      "Content-Type": "application/pdf",
      "Content-Length": String(obj.size),
      "Content-Disposition": `attachment; filename="${row.id}.pdf"`,
      ETag: obj.httpEtag,
      "Cache-Control": "private, max-age=3600",
    });
  })
  .openapi(listJobsRoute, async (c) => {
    const { limit, cursor, status } = c.req.valid("query");
    const after = decodeCursor(cursor, IdCursor);
    const rows = await listJobs(getDb(c.env.DB), c.get("auth").accountId, limit, after?.id, status);
    const page = toPage(rows, limit, (r) => ({ id: r.id }));
    return c.json({ data: page.data.map(toJobView), nextCursor: page.nextCursor }, 200);
  });
