import { createRoute, OpenAPIHono, type RouteConfig, z } from "@hono/zod-openapi";
import type { ZodError } from "zod";
import { errors, type ValidationIssue } from "./errors.ts";
import type { AppEnv } from "./types.ts";

export const ErrorSchema = z
  .object({
    error: z
      .object({
        code: z.string().openapi({ example: "invalid_request" }),
        message: z.string().openapi({ example: "The request is not valid." }),
      })
      .catchall(z.unknown()),
  })
  .openapi("Error");

const STATUS_TEXT: Record<number, string> = {
  400: "Invalid request (`invalid_request`, with `details.issues` naming each bad field)",
  401: "Missing, malformed, unknown or revoked API key",
  403: "Forbidden (e.g. a webhook verification with the wrong token)",
  404: "Not found (or owned by another account)",
  405: "Method not allowed",
  409: "Conflict with the resource's current state",
  413: "Body over the documented limit",
  415: "Body is not JSON",
  422: "Semantically invalid (e.g. `idempotency_key_reused`)",
  429: "Rate limited (`Retry-After`)",
  500: "Internal error",
  503: "A dependency is unavailable (`Retry-After`)",
};

export type ErrorStatus = 400 | 401 | 403 | 404 | 405 | 409 | 413 | 415 | 422 | 429 | 500 | 503;

/** One error status's response: the one error body. */
type ErrorResponse = { description: string; content: { "application/json": { schema: typeof ErrorSchema } } };

/** Error responses for a route definition, all with the one error body (keyed by exactly the given statuses, so a handler's own responses stay typed). */
export function errorResponses<const S extends ErrorStatus>(...statuses: S[]) {
  const out: Partial<Record<ErrorStatus, ErrorResponse>> = {};
  for (const s of statuses) out[s] = { description: STATUS_TEXT[s]!, content: { "application/json": { schema: ErrorSchema } } };
  return out as { [K in S]: ErrorResponse };
}

/** The errors any authenticated route can answer. */
export const AUTHED_ERRORS = [400, 401, 429, 500] as const;

/** The `{id}` path parameter of a resource route. */
export function idParam(example?: string) {
  return z.object({ id: z.string().max(64).openapi({ param: { name: "id", in: "path" }, ...(example ? { example } : {}) }) });
}

export function jsonBody<T extends z.ZodTypeAny>(schema: T, description?: string) {
  return { required: true, description, content: { "application/json": { schema } } };
}

export function jsonResponse<T extends z.ZodTypeAny>(schema: T, description: string) {
  return { description, content: { "application/json": { schema } } };
}

/** What a route declares beyond its group's: the request parts, its own responses, and the error statuses it adds. */
export type RouteSpec = Pick<RouteConfig, "description" | "middleware" | "request" | "responses"> & { errors?: readonly ErrorStatus[] };

type SpecErrors<S extends RouteSpec> = S extends { errors: readonly (infer E extends ErrorStatus)[] } ? E : never;

/**
 * Route declarations for one group of routes (a resource): each route names its method, path, summary and
 * what it adds; the group's tags, security and error statuses are filled in, so that they are written once.
 */
export function routeGroup<const G extends { tags: string[]; errors: readonly ErrorStatus[]; security?: RouteConfig["security"] }>(group: G) {
  const { tags, errors: groupErrors, ...shared } = group;
  return <const M extends RouteConfig["method"], const P extends string, const S extends RouteSpec>(method: M, path: P, summary: string, spec: S) => {
    const { errors = [], responses, ...rest } = spec;
    const failures = errorResponses<G["errors"][number] | SpecErrors<S>>(...groupErrors, ...errors);
    return createRoute({ method, path, tags, summary, ...shared, ...rest, responses: { ...responses, ...failures } });
  };
}

export function zodIssues(error: ZodError): ValidationIssue[] {
  return error.issues.map((i) => ({
    path: i.path.map(String).join("."),
    message: i.code === "unrecognized_keys" ? `unknown field(s): ${(i as { keys: string[] }).keys.join(", ")}` : i.message,
  }));
}

/** A router whose validation failures become our 400 body (every bad field named). */
export function createRouter() {
  return new OpenAPIHono<AppEnv>({
    defaultHook: (result) => {
      if (!result.success) {
        const issues = zodIssues(result.error as unknown as ZodError);
        throw errors.invalidRequest(`The request is not valid: ${issues.map((i) => `${i.path || "body"}: ${i.message}`).join("; ")}`, issues);
      }
    },
  });
}

export type Router = ReturnType<typeof createRouter>;
