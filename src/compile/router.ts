import type { Context } from "hono";
import { createRouter } from "../platform/openapi.ts";
import { addTiming } from "../platform/server-timing.ts";
import type { AppEnv } from "../platform/types.ts";
import * as routes from "./routes.ts";
import * as service from "./service.ts";
import { compileEnvironment } from "./environment.ts";
import { jobSynctex } from "./synctex.ts";
import { jobEventStream } from "./job-events.ts";

/** A synchronous compile's PDF, its stages in Server-Timing. */
function syncPdf(c: Context<AppEnv>, r: service.SyncResult) {
  for (const [name, ms] of Object.entries(r.timing)) addTiming(c, name, ms);
  return c.body(r.body, 200, service.syncPdfHeaders(r));
}

/** An accepted async job, `Location` its status URL. */
const accepted = (c: Context<AppEnv>, job: Awaited<ReturnType<typeof service.submitJob>>) => c.json(job, 202, { Location: job.statusUrl });

/** A stored PDF with its download headers. */
const pdfFile = (c: Context<AppEnv>, pdf: Awaited<ReturnType<typeof service.jobPdf>>) => c.body(pdf.body, 200, pdf.headers);

/** /v1/compile: synchronous compiles and async jobs (status, PDF, list). */
export const compileRoutes = createRouter()
  .openapi(routes.compileSyncRoute, async (c) => syncPdf(c, await service.compileSync(c.env, c.executionCtx, c.get("auth").accountId, c.req.valid("json"))))
  .openapi(routes.compileAsyncRoute, async (c) => accepted(c, await service.submitJob(c.env, c.get("auth").accountId, c.req.valid("json"))))
  .openapi(routes.getJobRoute, async (c) => c.json(await service.getJobView(c.env, c.get("auth").accountId, c.req.valid("param").id), 200))
  .openapi(routes.getJobPdfRoute, async (c) => pdfFile(c, await service.jobPdf(c.env, c.get("auth").accountId, c.req.valid("param").id)))
  .openapi(routes.getJobOutputRoute, async (c) => pdfFile(c, await service.jobPdf(c.env, c.get("auth").accountId, c.req.valid("param").id, false)))
  .openapi(routes.jobSynctexRoute, async (c) => c.body(await jobSynctex(c.env, c.get("auth").accountId, c.req.valid("param").id, c.req.valid("query")), 200, { "Content-Type": "application/json" }) as never)
  .openapi(routes.environmentRoute, async (c) => c.body(await compileEnvironment(c.env), 200, { "Content-Type": "application/json", "Cache-Control": "private, max-age=3600" }) as never)
  .openapi(routes.listJobsRoute, async (c) => c.json(await service.listJobViews(c.env, c.get("auth").accountId, c.req.valid("query")), 200))
  // stopping and following a running job
  .openapi(routes.cancelJobRoute, async (c) => c.json(await service.cancelJobView(c.env, c.executionCtx, c.get("auth").accountId, c.req.valid("param").id), 200))
  .openapi(routes.jobEventsRoute, async (c) => (await jobEventStream(c.env, c.get("auth").accountId, c.req.valid("param").id, c.req.valid("header")["last-event-id"])) as never);
