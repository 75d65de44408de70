import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import { ApiError, errors } from "./errors.ts";
import { log } from "./log.ts";
import type { AppEnv } from "./types.ts";

/** Maps anything thrown by a handler to the error body of docs/contracts.md §2. The only place that does. */
export function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  if (err instanceof HTTPException) {
    // Hono's own validator raises 400 for unparsable JSON. (Body limits throw our 413 themselves: body-guard.ts.)
    if (err.status === 400) return errors.invalidRequest("The request body is not valid JSON.", [{ path: "", message: err.message }]);
    return new ApiError(err.status as ApiError["status"], "http_error", err.message || "Request failed.");
  }
  if (err instanceof SyntaxError) return errors.invalidRequest("The request body is not valid JSON.", [{ path: "", message: err.message }]);
  return errors.internal();
}

export function handleError(err: unknown, c: Context<AppEnv>): Response {
  const apiError = toApiError(err);
  if (apiError.status >= 500) {
    log.error("unhandled error", { requestId: c.get("requestId"), error: String(err), stack: err instanceof Error ? err.stack : undefined });
  }
  return errorResponse(c, apiError);
}

export function errorResponse(c: Context<AppEnv>, apiError: ApiError): Response {
  for (const [name, value] of Object.entries(apiError.headers)) c.header(name, value);
  return c.json(apiError.toBody(), apiError.status);
}
