import { z } from "@hono/zod-openapi";
import { idParam } from "../platform/openapi.ts";
import { COMPILE_LIMITS as L } from "./limits.ts";
import { AssetHash } from "./assets/hash.ts";
import { MAX_PATH_DEPTH, mainPathIssue, pathIssue } from "../../container/src/names.ts";
import { DEFAULT_DPI, MAX_DPI, MAX_IMAGE_PAGES, MIN_DPI, OUTPUTS, type OutputIssue, parseOutput } from "../../container/src/output-spec.ts";

export const ENGINES = ["pdflatex", "xelatex", "lualatex"] as const;
export const Engine = z.enum(ENGINES).openapi({ description: "TeX engine.", example: "pdflatex" });
export type Engine = z.infer<typeof Engine>;

export const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
/** Where `source` goes in the project unless `mainPath` says otherwise. */
export const DEFAULT_MAIN_PATH = "main.tex";

// the compile server's own rules, so both answer the same 400 for the same name
const PATH_RULE = `a relative path of at most ${MAX_PATH_DEPTH} names separated by \`/\`: any UTF-8 name (spaces, any script, dotfiles) except \`.\` and \`..\`, without control characters or backslashes`;
const pathRule = (check: (p: string) => string | undefined) => (p: string, ctx: z.RefinementCtx) => {
  const issue = check(p);
  if (issue) ctx.addIssue({ code: "custom", message: issue });
};

export const CompileFile = z
  .strictObject({
    path: z
      .string()
      .min(1, { abort: true })
      .max(L.maxPathLength, { abort: true })
      .superRefine(pathRule(pathIssue))
      .openapi({ description: `${PATH_RULE}.`, example: "chapters/intro.tex" }),
    content: z.string().optional().openapi({ description: "The file's content: text, or base64 when `encoding` is `base64` (whitespace ignored). Either this or `asset`." }),
    encoding: z.enum(["utf8", "base64"]).default("utf8"),
    asset: AssetHash.optional().openapi({ description: "Instead of `content`: the SHA-256 of an asset this account uploaded (`PUT /v1/assets/{sha256}`); its bytes are the file's. Unknown hashes are a 422 `unknown_assets`." }),
  })
  .superRefine((f, ctx) => {
    if ((f.content === undefined) === (f.asset === undefined)) ctx.addIssue({ code: "custom", path: ["content"], message: "give either `content` or `asset` (one of them)" });
    else if (f.content !== undefined && f.encoding === "base64" && !BASE64.test(f.content.replace(/\s+/g, ""))) ctx.addIssue({ code: "custom", path: ["content"], message: "is not valid base64" });
  })
  .openapi("CompileFile");
/** A `files` entry as sent: its content, or an asset's hash (compile/assets/resolve.ts swaps in the bytes). */
export type CompileFileEntry = z.infer<typeof CompileFile>;
/** A project file with its content, as the compiler and the cache take it. */
export type CompileFile = { path: string; content: string; encoding: "utf8" | "base64" };

const compileFields = {
  source: z
    .string()
    .min(1)
    .openapi({ description: `The main LaTeX document (at most ${L.maxSourceBytes / 1024 / 1024} MiB of UTF-8).`, example: "\\documentclass{article}\\begin{document}Hello, world!\\end{document}" }),
  engine: Engine.default("pdflatex"),
  files: z
    .array(CompileFile)
    .optional()
    .openapi({ description: `The project's other files, by path from the project root (at most ${L.maxFiles}; source and files together at most ${L.maxTotalBytes / 1024 / 1024} MiB decoded, assets included). No file may have the main file's path.` }),
  mainPath: z
    .string()
    .min(1, { abort: true })
    .max(L.maxPathLength, { abort: true })
    .superRefine(pathRule(mainPathIssue))
    .optional()
    .openapi({
      description:
        `Where \`source\` is placed in the project (default \`${DEFAULT_MAIN_PATH}\`). The engine runs in that file's folder: \`\\input\`, \`\\include\`, \`\\includegraphics\` and \`\\bibliography\` find files relative to it first, then relative to the project root (\`..\` may go up to the project root, never above it). Any extension TeX does not write itself (\`.tex\`, \`.ltx\`, \`.xtx\`, ...). \`\\jobname\` is the file's name without its extension (\`thesis\` here).`,
      example: "thesis/thesis.tex",
    }),
  draft: z
    .boolean()
    .optional()
    .openapi({ description: "Fast draft compile: images are drawn as boxes with their file names and never read (the `draft` option of graphicx/graphics). Default false." }),
  shellEscape: z
    .boolean()
    .optional()
    .openapi({
      description:
        "Lets the document run programs (`\\write18`, minted's `pygmentize`, gnuplot, `epstopdf`), inside the compile sandbox: no network, only the project's folder, the same time and size limits. Default false: no program runs.",
    }),
  timeoutMs: z
    .number()
    .int()
    .min(L.minTimeoutMs)
    .max(L.maxTimeoutMs)
    .optional()
    .openapi({ description: `Compile time limit for all passes (default ${L.defaultTimeoutMs}).`, example: 30000 }),
  output: z
    .enum(OUTPUTS)
    .optional()
    .openapi({
      description:
        `What the compile answers (default \`pdf\`): \`png\`/\`svg\` pages as images (one page: the image itself; several: a zip of \`page-<n>.png\`/\`.svg\`; \`X-Output-Pages\` names them), ` +
        `\`log\` the whole TeX log as text, \`zip\` the PDF and the log (and the SyncTeX file with \`synctex\`) named after the main file.`,
    }),
  dpi: z
    .number()
    .int()
    .min(MIN_DPI)
    .max(MAX_DPI)
    .optional()
    .openapi({ description: `Resolution of \`png\` pages (default ${DEFAULT_DPI}). Only with \`output: "png"\`.`, example: 150 }),
  firstPage: z.number().int().min(1).max(1_000_000).optional().openapi({ description: "First page rendered by `png`/`svg` (default 1). Past the document's last page: 422 `page_out_of_range`." }),
  lastPage: z
    .number()
    .int()
    .min(1)
    .max(1_000_000)
    .optional()
    .openapi({ description: `Last page rendered by \`png\`/\`svg\` (default: firstPage + ${MAX_IMAGE_PAGES - 1}, or the document's end). At most ${MAX_IMAGE_PAGES} pages per request.` }),
  synctex: z.boolean().optional().openapi({ description: 'Adds `<name>.synctex.gz` (SyncTeX, for editors) to the `zip` output. Only with `output: "zip"`.' }),
  haltOnError: z
    .boolean()
    .optional()
    .openapi({ description: "`false`: compile despite errors. TeX goes on after each error; when it still makes a PDF, that is the answer, with `X-Compile-Errors: <n>`. A document that gives no PDF at all is still a 422. Default true." }),
};

/** The output fields' combinations, by the compile server's own rules (container/src/output-spec.ts). */
function outputRules(body: { output?: string | undefined; dpi?: number | undefined; firstPage?: number | undefined; lastPage?: number | undefined; synctex?: boolean | undefined }, ctx: z.RefinementCtx) {
  const issues: OutputIssue[] = [];
  parseOutput(body, issues);
  for (const i of issues) ctx.addIssue({ code: "custom", path: [i.path], message: i.message });
}

function compileRules(body: Parameters<typeof uniquePaths>[0] & Parameters<typeof outputRules>[0], ctx: z.RefinementCtx) {
  uniquePaths(body, ctx);
  outputRules(body, ctx);
}

function uniquePaths(body: { files?: CompileFileEntry[] | undefined; mainPath?: string | undefined }, ctx: z.RefinementCtx) {
  const main = (body.mainPath ?? DEFAULT_MAIN_PATH).toLowerCase();
  const seen = new Set<string>([main]);
  body.files?.forEach((f, i) => {
    const key = f.path.toLowerCase(); // case-insensitive file systems must not see two files as one
    if (key === main) ctx.addIssue({ code: "custom", path: ["files", i, "path"], message: `is the main file's path (mainPath): its content is \`source\`` });
    else if (seen.has(key)) ctx.addIssue({ code: "custom", path: ["files", i, "path"], message: "duplicates another file's path" });
    seen.add(key);
  });
  // a path cannot be both a file and a folder of another (the main file's included)
  for (const p of seen) {
    const parts = p.split("/");
    for (let i = 1; i < parts.length; i++) {
      const dir = parts.slice(0, i).join("/");
      if (seen.has(dir)) ctx.addIssue({ code: "custom", path: ["files"], message: `${dir} is both a file and a folder` });
    }
  }
}

export const CompileRequest = z.strictObject(compileFields).superRefine(compileRules).openapi("CompileRequest");
export type CompileRequest = z.infer<typeof CompileRequest>;

export const AsyncCompileRequest = z
  .strictObject({
    ...compileFields,
    callbackUrl: z
      .string()
      .max(2048)
      .optional()
      .openapi({ description: "Public https URL that receives the final job record, signed (Standard Webhooks) with the `callbackSecret` of the 202 response.", example: "https://example.com/hooks/compile" }),
  })
  .superRefine(compileRules)
  .openapi("AsyncCompileRequest");
export type AsyncCompileRequest = z.infer<typeof AsyncCompileRequest>;

export const JOB_STATUSES = ["queued", "running", "succeeded", "failed", "cancelled"] as const;
/** The statuses a job ends in: nothing changes it after. */
export const FINAL_STATUSES = ["succeeded", "failed", "cancelled"] as const;
export const JobStatus = z.enum(JOB_STATUSES);
export type JobStatus = z.infer<typeof JobStatus>;

export const CompileErrorInfo = z
  .object({
    code: z.string().openapi({ example: "compile_error" }),
    message: z.string(),
    line: z.number().int().nullable().optional(),
    file: z.string().nullable().optional(),
    errors: z.array(z.unknown()).optional(),
    log: z.string().optional(),
  })
  .catchall(z.unknown())
  .openapi("CompileJobError");
export type CompileErrorInfo = z.infer<typeof CompileErrorInfo>;

const iso = z.string().openapi({ format: "date-time" });

export const CompileJob = z
  .object({
    id: z.string().openapi({ example: "job_0mh8k2x1qa1b2c3d4e5f6" }),
    status: JobStatus,
    engine: Engine,
    createdAt: iso,
    startedAt: iso.nullable(),
    completedAt: iso.nullable(),
    durationMs: z.number().int().nullable().openapi({ description: "Compile time (0 when served from the result cache)." }),
    pages: z.number().int().nullable(),
    sizeBytes: z.number().int().nullable().openapi({ description: "Size of the PDF (or of the output asked for)." }),
    attempts: z.number().int().openapi({ description: "Compile attempts so far (infrastructure failures are retried)." }),
    error: CompileErrorInfo.optional().openapi({ description: "Why the job failed (the 422 body of a sync compile, or `compile_unavailable`)." }),
    statusUrl: z.string().openapi({ example: "/v1/compile/jobs/job_0mh8k2x1qa1b2c3d4e5f6" }),
    pdfUrl: z.string().openapi({ example: "/v1/compile/jobs/job_0mh8k2x1qa1b2c3d4e5f6/pdf" }),
    outputUrl: z.string().openapi({ description: "Where the job's result is, whatever its `output` (the PDF by default).", example: "/v1/compile/jobs/job_0mh8k2x1qa1b2c3d4e5f6/output" }),
    callbackUrl: z.string().nullable(),
    callbackStatus: z.enum(["pending", "delivered", "failed"]).nullable().openapi({ description: "Delivery of the final record to `callbackUrl`." }),
  })
  .openapi("CompileJob");
export type CompileJob = z.infer<typeof CompileJob>;

export const CreatedCompileJob = CompileJob.extend({
  callbackSecret: z.string().optional().openapi({ description: "Secret (`whsec_…`) that signs the callback. Only when `callbackUrl` is set; shown only in this response." }),
}).openapi("CreatedCompileJob");

export const JobIdParam = idParam("job_0mh8k2x1qa1b2c3d4e5f6");
