import { z } from "@hono/zod-openapi";
import { parseSynctexQuery } from "../../container/src/synctex-query.ts";
import { ApiError } from "../platform/errors.ts";
import { compilerFor } from "./config.ts";
import { getJob, jobPdfKey } from "./jobs.ts";
import { directoryDb } from "../platform/shards.ts";

/**
 * GET /v1/compile/jobs/{id}/synctex: positions between a job's sources and its PDF, from the
 * SyncTeX file of its zip output (`output: "zip"`, `synctex: true`). The compile server answers
 * them (container/src/synctex.ts); the query is checked here by its rule first.
 */
export const SynctexQuery = z
  .object({
    file: z.string().max(400).optional().openapi({ description: "Forward: a project path.", example: "chapters/intro.tex" }),
    line: z.string().max(16).optional().openapi({ description: "Forward: a line of `file` (from 1).", example: "12" }),
    column: z.string().max(16).optional().openapi({ description: "Forward: a column (default 0: the whole line).", example: "0" }),
    page: z.string().max(16).optional().openapi({ description: "Reverse: a page of the PDF (from 1).", example: "2" }),
    x: z.string().max(16).optional().openapi({ description: "Reverse: PDF points (bp) from the page's left edge.", example: "72.5" }),
    y: z.string().max(16).optional().openapi({ description: "Reverse: PDF points (bp) from the page's top edge.", example: "130" }),
  })
  .superRefine((q, ctx) => {
    const r = parseSynctexQuery(new URLSearchParams(Object.entries(q).filter((e): e is [string, string] => e[1] !== undefined)));
    if (!r.ok) for (const i of r.issues) ctx.addIssue({ code: "custom", path: i.path ? [i.path] : [], message: i.message });
  });

export const SynctexPositions = z
  .object({
    positions: z.array(
      z.object({
        page: z.number().int().optional(),
        x: z.number().optional(),
        y: z.number().optional(),
        width: z.number().optional(),
        height: z.number().optional(),
        file: z.string().nullable().optional().openapi({ description: "A project path; null for a file of the TeX installation." }),
        line: z.number().int().optional(),
        column: z.number().int().optional(),
      }),
    ),
  })
  .openapi("SynctexPositions", {
    description: "Forward: `[{page, x, y, width, height}]`, the boxes the line made (bp from the page's top left; x, y the left edge and baseline). Reverse: `[{file, line, column}]`. Nothing found: `[]`.",
  });

/** The stored entry `*.synctex.gz` of a zip the compile server wrote (its entries of that kind are stored, not deflated). */
export function synctexEntry(zip: Uint8Array): Uint8Array | undefined {
  const v = new DataView(zip.buffer, zip.byteOffset, zip.byteLength);
  // the end record is the last 22 bytes: the server writes no comment
  const end = zip.byteLength - 22;
  if (end < 0 || v.getUint32(end, true) !== 0x06054b50) return undefined;
  const count = v.getUint16(end + 10, true);
  let at = v.getUint32(end + 16, true);
  for (let i = 0; i < count && at + 46 <= end; i++) {
    if (v.getUint32(at, true) !== 0x02014b50) return undefined;
    const method = v.getUint16(at + 10, true);
    const size = v.getUint32(at + 20, true);
    const nameLen = v.getUint16(at + 28, true);
    const skip = nameLen + v.getUint16(at + 30, true) + v.getUint16(at + 32, true);
    const local = v.getUint32(at + 42, true);
    const name = new TextDecoder().decode(zip.subarray(at + 46, at + 46 + nameLen));
    at += 46 + skip;
    if (!name.endsWith(".synctex.gz") || method !== 0 || local + 30 > end) continue;
    const start = local + 30 + v.getUint16(local + 26, true) + v.getUint16(local + 28, true);
    return start + size <= end ? zip.subarray(start, start + size) : undefined;
  }
  return undefined;
}

/** The answer of a SyncTeX query on job `id` of the account. */
export async function jobSynctex(env: Env, accountId: string, id: string, query: Record<string, string | undefined>): Promise<string> {
  const row = await getJob(directoryDb(env), accountId, id);
  if (row.status === "failed") throw new ApiError(409, "job_failed", "This job failed, so it has no PDF; its `error` says why.", { status: row.status });
  if (row.status !== "succeeded") throw new ApiError(404, "pdf_not_ready", `The job is ${row.status}; its SyncTeX file exists once it has succeeded.`, { status: row.status });
  const obj = await env.FILES.get(jobPdfKey(row.accountId, row.id));
  if (!obj) throw new ApiError(404, "pdf_expired", "This job's output is no longer stored.");
  const zip = obj.httpMetadata?.contentType === "application/zip" ? new Uint8Array(await obj.arrayBuffer()) : undefined;
  if (!zip) await obj.body.cancel();
  const gz = zip && synctexEntry(zip);
  if (!gz) throw new ApiError(409, "no_synctex", 'This job has no SyncTeX file: compile with "output": "zip" and "synctex": true.');
  const qs = new URLSearchParams(Object.entries(query).filter((e): e is [string, string] => e[1] !== undefined)).toString();
  return compilerFor(env).synctex(gz, qs);
}
