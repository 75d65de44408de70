import { z } from "@hono/zod-openapi";
import { idempotency } from "../platform/idempotency.ts";
import { archiveBody } from "./archive/request.ts";
import { AUTHED_ERRORS, jsonBody, jsonResponse, routeGroup } from "../platform/openapi.ts";
import { pageOf, PaginationQuery } from "../platform/pagination.ts";
import { COMPILE_LIMITS as L } from "./limits.ts";
import { CompileEnvironment } from "./environment.ts";
import { SynctexPositions, SynctexQuery } from "./synctex.ts";
import { AsyncCompileRequest, CompileJob, CompileRequest, CreatedCompileJob, JobIdParam, JobStatus } from "./schemas.ts";

const LIMITS_TEXT =
  `Limits: request body 10 MiB; \`source\` ${L.maxSourceBytes / 1024 / 1024} MiB; ${L.maxFiles} files; source and files ${L.maxTotalBytes / 1024 / 1024} MiB decoded in all ` +
  `(over any of these: 413 \`payload_too_large\` naming the limit); \`timeoutMs\` ${L.minTimeoutMs}-${L.maxTimeoutMs} (default ${L.defaultTimeoutMs}); PDF ${L.maxPdfBytes / 1024 / 1024} MiB (over: 422 \`output_too_large\`).`;

const binary = { schema: z.string().openapi({ type: "string", format: "binary" }) };
const pdfContent = { "application/pdf": binary };
/** What a compile answers, by `output`. */
const outputContent = { "application/pdf": binary, "image/png": binary, "image/svg+xml": binary, "text/plain": binary, "application/zip": binary };
/** Archive bodies; a plain (non-zod) schema, so that no form validator runs: archiveBody() turned the body into JSON. */
const archiveSchema = { type: "string" as const, format: "binary" };
const multipartSchema = {
  type: "object" as const,
  required: ["archive"],
  properties: {
    archive: { ...archiveSchema, description: "The project as a `.zip` or `.tar.gz`." },
    options: { type: "string" as const, description: "JSON object of the request's other fields (`engine`, `mainPath`, `output`, ...; not `source`; `files` only naming assets, `{\"path\", \"asset\"}`, added to the archive's)." },
  },
};
const ARCHIVE_TEXT =
  "The body may instead be the project as an archive: a `.zip` (`application/zip`) or `.tar.gz` (`application/gzip`, `application/x-tar`), or `multipart/form-data` with the archive as the `archive` part and the other fields as a JSON `options` part. " +
  "The main file is `mainPath` (in `options`) or, like latexmk and Overleaf, the `.tex` file at the archive's root with `\\documentclass` (`main.tex` when several; else 422 `no_main_file` or `ambiguous_main_file` with `candidates`); one folder holding everything is taken as the project root. " +
  "A file may be an asset uploaded before (`PUT /v1/assets/{sha256}`), named in `files` as `{\"path\", \"asset\": \"<sha256>\"}`: it counts toward the `files` limits like the others, and any hash the account has no asset for is a 422 `unknown_assets` listing them all. " +
  "The archive is held to the `files` limits while it is unpacked (413; also past a compression ratio of 100 once over 1 MiB), and a link, device, absolute path, `..`, duplicate name or corrupt archive is a 400. ";
/** The JSON body and its archive forms; typed as the JSON body, which is what the handler gets. */
function compileBody<T extends Parameters<typeof jsonBody>[0]>(schema: T): ReturnType<typeof jsonBody<T>> {
  const json = jsonBody(schema);
  const archive = { schema: archiveSchema };
  const content = { ...json.content, "application/zip": archive, "application/gzip": archive, "application/x-tar": archive, "multipart/form-data": { schema: multipartSchema } };
  return { ...json, content } as ReturnType<typeof jsonBody<T>>;
}
const header = (description: string) => ({ schema: { type: "string" as const }, description });

const route = routeGroup({ tags: ["Compile"], errors: AUTHED_ERRORS });
/** What a compile request can answer besides the group's errors. */
const COMPILE_ERRORS = [409, 413, 415, 422, 503] as const;

export const compileSyncRoute = route("post", "/v1/compile/sync", "Compile LaTeX to PDF and answer the PDF", {
  description:
    "Answers the PDF bytes. A repeat of the same request (same engine, source, files, `mainPath`, `draft` and `shellEscape`) within the cache lifetime is served from the account's result cache (`X-Cache: HIT`, `X-Compile-Duration-Ms: 0`) without compiling. " +
    "A LaTeX failure is 422 `compile_error` with `line`, `file`, `errors` and the tail of the `log`; `compile_timeout` when `timeoutMs` ran out. 503 `compiler_busy`/`service_unavailable` with `Retry-After` when no compiler is free. " +
    "With `output`, the answer is pages as `image/png` or `image/svg+xml` (several pages: an `application/zip` of `page-<n>.png`), the whole log (`text/plain`) or an `application/zip` of the PDF, the log and, with `synctex`, the SyncTeX file; a page range past the cap, or a field with an output it does not apply to, is a 400. " +
    "`haltOnError: false` answers the PDF of a document with errors (TeX goes on after each), with `X-Compile-Errors`. " +
    "The compiler keeps the account's recently compiled preambles (everything before `\\begin{document}` and the files it reads) precompiled: the next compile of a document with the same preamble skips it (`X-Compile-Preamble: hit`); the PDF is the same either way. " +
    ARCHIVE_TEXT +
    `Accepts \`Idempotency-Key\`. ${LIMITS_TEXT}`,
  middleware: [archiveBody(), idempotency()] as const, request: { body: compileBody(CompileRequest) },
  responses: {
    200: {
      description: "The PDF, or the output the request asked for",
      content: outputContent,
      headers: {
        "X-Output-Pages": header("The pages rendered as images (`2-4`), for `png` and `svg`."),
        "X-Compile-Errors": header("With `haltOnError: false`: how many errors TeX went on after (absent when none)."),
        "X-Compile-Duration-Ms": header("Milliseconds spent compiling for this response (0 on a cache hit)."),
        "X-Engine": header("Engine that produced the PDF."),
        "X-Cache": header("`HIT` (served from the result cache) or `MISS`."),
        "X-Compile-Pages": header("Pages in the PDF."),
        "X-Compile-Preamble": header("`hit`: compiled from the account's precompiled preamble; `miss`: none yet (one is made in the background for the next compile). Absent on a cache hit and for documents whose preamble is not precompiled."),
        "X-Compile-Project-Warnings": header("The settings of the project's `latexmkrc` that were ignored (it is read, never run: only `@default_files`, the engine, input folders and the makeindex style are honoured), percent-encoded. Absent when none were, and on a cache hit."),
        ETag: header("Content hash of the request (the cache key)."),
      },
    },
  },
  errors: COMPILE_ERRORS,
});

export const compileAsyncRoute = route("post", "/v1/compile/async", "Queue a compile job", {
  description:
    "Answers 202 with the job (`Location` = its `statusUrl`). Poll `GET /v1/compile/jobs/{id}` until `succeeded`, `failed` or `cancelled` (or follow `GET /v1/compile/jobs/{id}/events`), then download `pdfUrl`; `DELETE /v1/compile/jobs/{id}` stops it. " +
    "With `callbackUrl` (public https), the final job record is POSTed there as `{type: \"compile.job.succeeded\"|\"compile.job.failed\"|\"compile.job.cancelled\", timestamp, data}`, signed like webhooks (Standard Webhooks) with the `callbackSecret` returned here once, retried on failure. " +
    ARCHIVE_TEXT +
    `Accepts \`Idempotency-Key\`. ${LIMITS_TEXT}`,
  middleware: [archiveBody(), idempotency()] as const, request: { body: compileBody(AsyncCompileRequest) },
  responses: { 202: { ...jsonResponse(CreatedCompileJob, "The queued job"), headers: { Location: header("The job's status URL.") } } }, errors: COMPILE_ERRORS,
});

export const getJobRoute = route("get", "/v1/compile/jobs/{id}", "A compile job's status and outcome", { request: { params: JobIdParam }, responses: { 200: jsonResponse(CompileJob, "The job") }, errors: [404] });

export const getJobPdfRoute = route("get", "/v1/compile/jobs/{id}/pdf", "Download a compile job's PDF", {
  description: "404 `pdf_not_ready` until the job has succeeded; 409 `job_failed` for a failed job (its `error` is in the job record), `job_cancelled` for a cancelled one; 409 `not_a_pdf` for a job that asked for another `output` (download it from `outputUrl`).",
  request: { params: JobIdParam },
  responses: { 200: { description: "The PDF", content: pdfContent, headers: { "Content-Disposition": header("`attachment; filename=\"<id>.pdf\"`") } } }, errors: [404, 409],
});

export const getJobOutputRoute = route("get", "/v1/compile/jobs/{id}/output", "Download a compile job's output", {
  description: "What the job's `output` asked for (the PDF by default; page images, a zip, or the log), with its own type. Same errors as the PDF download.",
  request: { params: JobIdParam },
  responses: { 200: { description: "The output", content: outputContent, headers: { "Content-Disposition": header("`attachment; filename=\"<id>.<pdf|png|svg|log|zip>\"`"), "X-Output-Pages": header("The pages rendered, for `png` and `svg`.") } } },
  errors: [404, 409],
});

export const jobSynctexRoute = route("get", "/v1/compile/jobs/{id}/synctex", "SyncTeX positions of a compile job", {
  description:
    "For editors: `?file=&line=&column=` (forward) answers where that source line is in the PDF; `?page=&x=&y=` (reverse, PDF points from the page's top left) which source line a point comes from. " +
    'The job must have been compiled with `"output": "zip"` and `"synctex": true` (else 409 `no_synctex`). A bad query is a 400.',
  request: { params: JobIdParam, query: SynctexQuery },
  responses: { 200: jsonResponse(SynctexPositions, "The positions") },
  errors: [404, 409, 503],
});

export const environmentRoute = route("get", "/v1/compile/environment", "The compiler's TeX installation", {
  description:
    "TeX Live's version, the engines' versions, every LaTeX package and class installed (with the date and version it declares) and the font families `fontspec` finds by name. Read by the compile server from its installation, not a hand-written list.",
  responses: { 200: jsonResponse(CompileEnvironment, "The environment") },
  errors: [503],
});

export const listJobsRoute = route("get", "/v1/compile/jobs", "List the account's compile jobs, newest first", {
  request: { query: PaginationQuery.extend({ status: JobStatus.optional().openapi({ description: "Only jobs in this status." }) }) },
  responses: { 200: jsonResponse(pageOf(CompileJob, "CompileJobPage"), "A page of jobs") },
});

// ---- Stopping and following a running job (cancel, progress events) ----

export const cancelJobRoute = route("delete", "/v1/compile/jobs/{id}", "Cancel a queued or running compile job", {
  description:
    "A queued job never runs; a running job is stopped where it runs (its TeX processes killed, its compile slot freed) before the answer. " +
    "Answers the job, now `cancelled`; its PDF and output never exist. With a `callbackUrl` the job record is POSTed there as `compile.job.cancelled`. " +
    "Cancelling a job that is already `cancelled` answers it again (200, idempotent); a `succeeded` or `failed` job is a 409 `job_finished`. Another account's job is a 404.",
  request: { params: JobIdParam },
  responses: { 200: jsonResponse(CompileJob, "The cancelled job") },
  errors: [404, 409],
});

export const jobEventsRoute = route("get", "/v1/compile/jobs/{id}/events", "Follow a compile job's progress (Server-Sent Events)", {
  description:
    "A `text/event-stream` of the job's progress: `status` (`{status}`: `queued`, `running`) as it changes; while it compiles, the compiler's events, each with an `id`: " +
    "`status` (`{state}`), `pass` (`{pass, engine}`) and `pass-end` (`{pass, exitCode}`) for each TeX pass, `tool` (`{tool}`: `bibtex`, `biber`, `makeindex`, `xindy`, `splitindex`, `xdvipdfmx`), " +
    `\`log\` (\`{line}\`: lines of the TeX log, each at most 400 characters, at most 20 a second after a burst of 100), \`log-skipped\` (\`{lines}\`: how many were left out), ` +
    "`gap` (`{missed}`: events a slow reader missed), then `result` (`{ok, pages, passes, durationMs}` or `{ok: false, code, message, line, file}`) or `cancelled`; " +
    "last, `done` with the final job record (as `GET /v1/compile/jobs/{id}`), and the stream ends. A finished job answers `done` at once. " +
    "A stream lasts at most 5 minutes; reconnect with the `Last-Event-ID` header (EventSource does) to go on after the last event you had.",
  request: { params: JobIdParam, headers: z.object({ "last-event-id": z.string().max(40).optional().openapi({ description: "The `id` of the last event received (`<attempt>.<n>`)." }) }) },
  responses: { 200: { description: "The job's events", content: { "text/event-stream": { schema: z.string() } } } },
  errors: [404],
});
