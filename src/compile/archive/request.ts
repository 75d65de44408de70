import type { MiddlewareHandler } from "hono";
import { errors } from "../../platform/errors.ts";
import { ARCHIVE_TYPE } from "../../platform/limits.ts";
import type { AppEnv } from "../../platform/types.ts";
import { archiveProject } from "./project.ts";
import { badArchive } from "./budget.ts";

const MULTIPART = /^multipart\/form-data\s*(;|$)/i;
const MAX_OPTIONS_BYTES = 64 * 1024;

function options(value: unknown): Record<string, unknown> {
  if (value === null) return {};
  if (typeof value !== "string") throw errors.invalidRequest("The `options` part must be text (JSON).", [{ path: "options", message: "is not text" }]);
  if (value.length > MAX_OPTIONS_BYTES) throw errors.invalidRequest(`The \`options\` part is over ${MAX_OPTIONS_BYTES} bytes.`, [{ path: "options", message: "is too long" }]);
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    throw errors.invalidRequest("The `options` part is not valid JSON.", [{ path: "options", message: "is not valid JSON" }]);
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw errors.invalidRequest("The `options` part must be a JSON object.", [{ path: "options", message: "is not an object" }]);
  if ("source" in parsed) throw errors.invalidRequest("`options` may not hold `source`: the archive is the project.", [{ path: "options.source", message: "comes from the archive" }]);
  // files beside the archive's: only assets named by hash (the archive holds every file with content)
  const files = (parsed as { files?: unknown }).files;
  if (files !== undefined && !(Array.isArray(files) && files.every((f) => typeof f === "object" && f !== null && "asset" in f && !("content" in f))))
    throw errors.invalidRequest("`options.files` may only name assets (`{\"path\", \"asset\"}`): the archive holds the project's other files.", [{ path: "options.files", message: "may only name assets" }]);
  return parsed as Record<string, unknown>;
}

/** The archive and options of a request: the whole body, or a form's `archive` file and `options` JSON. */
async function parts(req: Request): Promise<{ archive: Uint8Array; opts: Record<string, unknown> }> {
  if (!MULTIPART.test(req.headers.get("Content-Type") ?? "")) return { archive: new Uint8Array(await req.arrayBuffer()), opts: {} };
  let form: FormData;
  try {
    form = await req.formData();
  } catch {
    throw errors.invalidRequest("The body is not valid multipart/form-data.", [{ path: "body", message: "is not valid multipart/form-data" }]);
  }
  const archive = form.get("archive");
  if (archive === null || typeof archive === "string") throw badArchive("is missing: send it as the file part `archive`.");
  for (const k of form.keys()) if (k !== "archive" && k !== "options") throw errors.invalidRequest(`Unknown form part \`${k}\`: only \`archive\` and \`options\`.`, [{ path: k, message: "unknown part" }]);
  const opt = form.get("options");
  return { archive: new Uint8Array(await archive.arrayBuffer()), opts: options(typeof opt === "string" || opt === null ? opt : await opt.text()) };
}

/**
 * A compile request sent as a project archive becomes the JSON request it stands for (the main file
 * as `source`, the rest as `files`), so validation, limits, the cache and the compiler see nothing
 * new. The body was read under the route's limit by the body guard, so it is at most 10 MiB here.
 */
export function archiveBody(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const raw = c.req.raw;
    if (raw.body === null || !ARCHIVE_TYPE.test(raw.headers.get("Content-Type") ?? "")) return next();
    const { archive, opts } = await parts(raw);
    if (opts.mainPath !== undefined && typeof opts.mainPath !== "string") throw errors.invalidRequest("The request is not valid: mainPath: must be a string", [{ path: "mainPath", message: "must be a string" }]);
    const mainPath = opts.mainPath as string | undefined;
    const project = archiveProject(archive, mainPath);
    const headers = new Headers(raw.headers);
    headers.set("Content-Type", "application/json");
    headers.delete("Content-Length");
    const assets = (opts.files as unknown[] | undefined) ?? [];
    c.req.raw = new Request(raw, { body: JSON.stringify({ ...opts, ...project, files: [...project.files, ...assets] }), headers });
    return next();
  };
}
