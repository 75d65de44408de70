import type { ContentfulStatusCode } from "hono/utils/http-status";

/** One issue of a failed validation, as shown to clients in `details.issues`. */
export interface ValidationIssue {
  path: string;
  message: string;
}

/**
 * The one error type of the API. Anything thrown that is not an ApiError becomes a 500
 * `internal_error` in handleError (platform/error-handler.ts), so a raw message never leaks.
 */
export class ApiError extends Error {
  readonly status: ContentfulStatusCode;
  readonly code: string;
  readonly details: Record<string, unknown>;
  readonly headers: Record<string, string>;

  constructor(
    status: ContentfulStatusCode,
    code: string,
    message: string,
    details: Record<string, unknown> = {},
    headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = "ApiError";
    this.status = status;
    this.code = code;
    this.details = details;
    this.headers = headers;
  }

  toBody(): { error: Record<string, unknown> } {
    return { error: { code: this.code, message: this.message, ...this.details } };
  }
}

export const errors = {
  invalidRequest: (message: string, issues: ValidationIssue[] = []) =>
    new ApiError(400, "invalid_request", message, { details: { issues } }),
  invalidCursor: () =>
    new ApiError(400, "invalid_cursor", "The cursor is not valid: pass `nextCursor` from the previous page unchanged.", { details: { issues: [{ path: "cursor", message: "invalid cursor" }] } }),
  unauthorized: (message = "A valid API key is required: send `Authorization: Bearer <API_KEY>`.") =>
    new ApiError(401, "unauthorized", message),
  forbidden: (message: string) => new ApiError(403, "forbidden", message),
  notFound: (what = "resource") => new ApiError(404, "not_found", `No ${what} was found at this address.`),
  methodNotAllowed: (allow: string[]) =>
    new ApiError(405, "method_not_allowed", `This route does not accept that method. Allowed: ${allow.join(", ")}.`, {}, { Allow: allow.join(", ") }),
  conflict: (code: string, message: string, details: Record<string, unknown> = {}) => new ApiError(409, code, message, details),
  /** The one wording of `session_not_working`, wherever a session must be WORKING (`status` null: no such session any more). */
  sessionNotWorking: (sessionId: string, status: string | null) =>
    new ApiError(409, "session_not_working", `The session is ${status ?? "gone"}; it must be WORKING. Restart it with POST /api/sessions/${sessionId}/restart.`, { status }),
  payloadTooLarge: (limitBytes: number) =>
    new ApiError(413, "payload_too_large", `The request body is larger than the limit of ${limitBytes} bytes for this route.`, { limitBytes }),
  eventTooLarge: (type: string, bytes: number, limitBytes: number) =>
    new ApiError(413, "event_too_large", `This change would publish a ${type} event of ${bytes} bytes, over the limit of ${limitBytes} bytes. Nothing was written.`, { limitBytes }),
  unsupportedMediaType: () =>
    new ApiError(415, "unsupported_media_type", "Send the request body as JSON with `Content-Type: application/json`."),
  unprocessable: (code: string, message: string, details: Record<string, unknown> = {}) => new ApiError(422, code, message, details),
  rateLimited: (retryAfterSeconds: number) =>
    new ApiError(429, "rate_limited", `Too many requests: retry after ${retryAfterSeconds} seconds.`, { retryAfter: retryAfterSeconds }, { "Retry-After": String(retryAfterSeconds) }),
  /** Too many messages to one recipient in a short time (WhatsApp's pair rate), said before the network says it. */
  pairRateLimited: (retryAfterSeconds: number) =>
    new ApiError(429, "pair_rate_limited", `Too many messages to this recipient in a short time: retry after ${retryAfterSeconds} seconds.`, { retryAfter: retryAfterSeconds }, { "Retry-After": String(retryAfterSeconds) }),
  unavailable: (message: string, retryAfterSeconds = 5) =>
    new ApiError(503, "service_unavailable", message, { retryAfter: retryAfterSeconds }, { "Retry-After": String(retryAfterSeconds) }),
  tooManyStreams: (max: number) =>
    new ApiError(429, "too_many_streams", `This account already has ${max} open event streams; close one first.`, { max }, { "Retry-After": "5" }),
  internal: () => new ApiError(500, "internal_error", "Something went wrong on our side. The request id identifies it in our logs."),
};
