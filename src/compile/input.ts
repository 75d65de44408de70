import { ApiError } from "../platform/errors.ts";
import type { CompileInput } from "./compiler.ts";
import { COMPILE_LIMITS as L } from "./limits.ts";

const encoder = new TextEncoder();

export function decodedBytes(content: string, encoding: "utf8" | "base64"): number {
  if (encoding === "base64") {
    const clean = /\s/.test(content) ? content.replace(/\s+/g, "") : content;
    return (clean.length / 4) * 3 - (clean.endsWith("==") ? 2 : clean.endsWith("=") ? 1 : 0);
  }
  return encoder.encode(content).byteLength;
}

export function tooLarge(limit: string, message: string, limitValue: number): ApiError {
  return new ApiError(413, "payload_too_large", message, { limit, limitValue });
}

/** The size limits of the compile API (413, naming the limit). Shape and values were checked by zod. */
export function checkCompileLimits(input: CompileInput): void {
  const sourceBytes = encoder.encode(input.source).byteLength;
  if (sourceBytes > L.maxSourceBytes) throw tooLarge("source", `source is ${sourceBytes} bytes, over the limit of ${L.maxSourceBytes}.`, L.maxSourceBytes);
  const files = input.files ?? [];
  if (files.length > L.maxFiles) throw tooLarge("files", `files has ${files.length} entries, over the limit of ${L.maxFiles}.`, L.maxFiles);
  let total = sourceBytes;
  for (const f of files) total += decodedBytes(f.content, f.encoding);
  if (total > L.maxTotalBytes) throw tooLarge("totalBytes", `source and files are ${total} bytes decoded, over the limit of ${L.maxTotalBytes}.`, L.maxTotalBytes);
}
