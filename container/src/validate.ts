// Validation of POST /compile bodies. Returns the decoded request or the list of issues.
import { ENGINES, type Engine, type Limits } from "./config.ts";
import { MAIN_FILE } from "./engine.ts";
import { mainPathIssue, pathIssue } from "./names.ts";
import { projectSettings, type ProjectSettings } from "./project.ts";
import { OUTPUT_FIELDS, parseOutput, type OutputSpec } from "./output-spec.ts";

export interface Issue {
  path: string;
  message: string;
}

export interface InputFile {
  path: string; // normalised, relative
  data: Buffer;
}

export interface CompileRequest {
  engine: Engine;
  source: string;
  files: InputFile[];
  timeoutMs: number;
  /** Where `source` is placed in the project; the engine runs in its folder. */
  mainPath: string;
  /** Images as boxes (graphicx/graphics `draft`). */
  draft: boolean;
  /** The document may run programs (\write18), inside the sandbox. */
  shellEscape: boolean;
  /** Opaque account scope for per-account caches (precompiled preambles); none: no such caches. */
  namespace?: string;
  /** What the project's latexmkrc asks for (search folders, index style) and what of it was ignored. */
  project?: ProjectSettings;
  /** What is answered: the PDF, page images, the log or a zip (outputs.ts). */
  output?: OutputSpec;
  /** false: errors do not stop the engine; the PDF is answered with them as warnings. */
  haltOnError?: boolean;
}

const NAMESPACE = /^[A-Za-z0-9_-]{1,64}$/;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** `mainPath`: a project path whose name has an extension TeX does not write (`.tex`, `.ltx`, `.xtx`, ...). */
export function checkMainPath(p: unknown): string | undefined {
  return mainPathIssue(p);
}

/** A request path: any project name (see names.ts), never out of the project. */
export function checkPath(p: unknown): string | undefined {
  return pathIssue(p);
}

export function validateCompile(body: unknown, limits: Limits): { ok: true; value: CompileRequest } | { ok: false; issues: Issue[] } {
  const issues: Issue[] = [];
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    return { ok: false, issues: [{ path: "", message: "body must be a JSON object" }] };
  }
  const b = body as Record<string, unknown>;
  for (const k of Object.keys(b)) {
    if (!["engine", "source", "files", "timeoutMs", "mainPath", "draft", "shellEscape", "namespace", "haltOnError", ...OUTPUT_FIELDS].includes(k as never)) issues.push({ path: k, message: "unknown field" });
  }
  if (b.engine !== undefined && (typeof b.engine !== "string" || !ENGINES.includes(b.engine as Engine))) {
    issues.push({ path: "engine", message: `must be one of ${ENGINES.join(", ")}` });
  }
  if (typeof b.source !== "string" || b.source.length === 0) {
    issues.push({ path: "source", message: "must be a non-empty string" });
  } else if (Buffer.byteLength(b.source, "utf8") > limits.maxFileBytes) {
    issues.push({ path: "source", message: `must be at most ${limits.maxFileBytes} bytes` });
  }
  let timeoutMs = limits.defaultTimeoutMs;
  if (b.timeoutMs !== undefined) {
    if (typeof b.timeoutMs !== "number" || !Number.isInteger(b.timeoutMs) || b.timeoutMs < 1000 || b.timeoutMs > limits.maxTimeoutMs) {
      issues.push({ path: "timeoutMs", message: `must be an integer from 1000 to ${limits.maxTimeoutMs}` });
    } else timeoutMs = b.timeoutMs;
  }
  let mainPath = MAIN_FILE;
  if (b.mainPath !== undefined) {
    const issue = checkMainPath(b.mainPath);
    if (issue) issues.push({ path: "mainPath", message: issue });
    else mainPath = b.mainPath as string;
  }
  if (b.draft !== undefined && typeof b.draft !== "boolean") issues.push({ path: "draft", message: "must be a boolean" });
  if (b.shellEscape !== undefined && typeof b.shellEscape !== "boolean") issues.push({ path: "shellEscape", message: "must be a boolean" });
  if (b.shellEscape === true && !limits.shellEscape) issues.push({ path: "shellEscape", message: "is not available on this server (COMPILE_SHELL_ESCAPE=off, or no sandbox: safe mode or COMPILE_SANDBOX=off)" });
  if (b.haltOnError !== undefined && typeof b.haltOnError !== "boolean") issues.push({ path: "haltOnError", message: "must be a boolean" });
  const output = parseOutput(b, issues);
  if (b.namespace !== undefined && (typeof b.namespace !== "string" || !NAMESPACE.test(b.namespace))) {
    issues.push({ path: "namespace", message: "must be 1 to 64 letters, digits, _ or -" });
  }
  const files: InputFile[] = [];
  let total = typeof b.source === "string" ? Buffer.byteLength(b.source, "utf8") : 0;
  if (b.files !== undefined) {
    if (!Array.isArray(b.files)) {
      issues.push({ path: "files", message: "must be an array" });
    } else if (b.files.length > limits.maxFiles) {
      issues.push({ path: "files", message: `must have at most ${limits.maxFiles} entries` });
    } else {
      const seen = new Set<string>([mainPath.toLowerCase()]);
      b.files.forEach((f: unknown, i: number) => {
        const at = `files[${i}]`;
        if (typeof f !== "object" || f === null || Array.isArray(f)) {
          issues.push({ path: at, message: "must be an object" });
          return;
        }
        const o = f as Record<string, unknown>;
        for (const k of Object.keys(o)) {
          if (!["path", "content", "encoding"].includes(k)) issues.push({ path: `${at}.${k}`, message: "unknown field" });
        }
        const pathIssue = checkPath(o.path);
        if (pathIssue) issues.push({ path: `${at}.path`, message: pathIssue });
        else if ((o.path as string).toLowerCase() === mainPath.toLowerCase()) issues.push({ path: `${at}.path`, message: `${mainPath} is the main file (mainPath): its content is source` });
        else if (seen.has((o.path as string).toLowerCase())) issues.push({ path: `${at}.path`, message: "duplicate path" });
        else seen.add((o.path as string).toLowerCase());
        const enc = o.encoding ?? "utf8";
        if (enc !== "utf8" && enc !== "base64") issues.push({ path: `${at}.encoding`, message: "must be utf8 or base64" });
        if (typeof o.content !== "string") {
          issues.push({ path: `${at}.content`, message: "must be a string" });
          return;
        }
        let data: Buffer;
        if (enc === "base64") {
          const clean = o.content.replace(/\s+/g, "");
          if (!BASE64.test(clean)) {
            issues.push({ path: `${at}.content`, message: "is not valid base64" });
            return;
          }
          data = Buffer.from(clean, "base64");
        } else data = Buffer.from(o.content, "utf8");
        if (data.length > limits.maxFileBytes) issues.push({ path: `${at}.content`, message: `must be at most ${limits.maxFileBytes} bytes` });
        total += data.length;
        if (!pathIssue) files.push({ path: o.path as string, data });
      });
      // a file may not also be used as a directory of another ("a" and "a/b")
      for (const p of seen) {
        const parts = p.split("/");
        for (let i = 1; i < parts.length; i++) {
          if (seen.has(parts.slice(0, i).join("/"))) issues.push({ path: "files", message: `${parts.slice(0, i).join("/")} is both a file and a directory` });
        }
      }
    }
  }
  if (total > limits.maxTotalBytes) issues.push({ path: "files", message: `all files together must be at most ${limits.maxTotalBytes} bytes` });
  if (issues.length > 0) return { ok: false, issues };
  // without a main path or engine of its own, the project's latexmkrc may name them
  const p = projectSettings({ files, mainPath: b.mainPath as string | undefined, engine: b.engine as Engine | undefined }, MAIN_FILE);
  const value: CompileRequest = { engine: p.engine, source: b.source as string, files, timeoutMs, mainPath: p.mainPath, draft: b.draft === true, shellEscape: b.shellEscape === true, project: p.project };
  if (output.kind !== "pdf") value.output = output;
  if (b.haltOnError === false) value.haltOnError = false;
  if (typeof b.namespace === "string") value.namespace = b.namespace;
  return { ok: true, value };
}
