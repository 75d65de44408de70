import { createRoute } from "@hono/zod-openapi";
import { idempotency } from "../../platform/idempotency.ts";
import { AUTHED_ERRORS, errorResponses, jsonBody, jsonResponse } from "../../platform/openapi.ts";
import { pageOf, PaginationQuery } from "../../platform/pagination.ts";
import { Message } from "../messages/schemas.ts";
import { CreateSessionBody, SandboxInboundBody, Session, SessionIdParam } from "./schemas.ts";

const tags = ["Sessions"];

export const createSessionRoute = createRoute({
  method: "post",
  path: "/api/sessions",
  tags,
  summary: "Create a session (sandbox, or WhatsApp Cloud API with credentials checked at once)",
  description: "Answers 201 with the session: `WORKING` when connected, `FAILED` with `statusReason` when the network refused the credentials.",
  middleware: [idempotency()] as const,
  request: { body: jsonBody(CreateSessionBody) },
  responses: { 201: jsonResponse(Session, "The session"), ...errorResponses(...AUTHED_ERRORS, 413, 415, 422) },
});

export const listSessionsRoute = createRoute({
  method: "get",
  path: "/api/sessions",
  tags,
  summary: "List sessions, newest first",
  request: { query: PaginationQuery },
  responses: { 200: jsonResponse(pageOf(Session, "SessionPage"), "A page of sessions"), ...errorResponses(...AUTHED_ERRORS) },
});

export const getSessionRoute = createRoute({
  method: "get",
  path: "/api/sessions/{id}",
  tags,
  summary: "Get a session",
  request: { params: SessionIdParam },
  responses: { 200: jsonResponse(Session, "The session"), ...errorResponses(...AUTHED_ERRORS, 404) },
});

export const deleteSessionRoute = createRoute({
  method: "delete",
  path: "/api/sessions/{id}",
  tags,
  summary: "Stop a session for good (status STOPPED; credentials erased; queued sends fail)",
  request: { params: SessionIdParam },
  responses: { 200: jsonResponse(Session, "The stopped session"), ...errorResponses(...AUTHED_ERRORS, 404) },
});

export const restartSessionRoute = createRoute({
  method: "post",
  path: "/api/sessions/{id}/restart",
  tags,
  summary: "Reconnect a session (FAILED -> STARTING -> WORKING | FAILED)",
  request: { params: SessionIdParam },
  responses: { 200: jsonResponse(Session, "The session after reconnecting"), ...errorResponses(...AUTHED_ERRORS, 404, 409) },
});

export const sandboxInboundRoute = createRoute({
  method: "post",
  path: "/api/sessions/{id}/sandbox/inbound",
  tags,
  summary: "Make a sandbox session receive a message",
  middleware: [idempotency()] as const,
  request: { params: SessionIdParam, body: jsonBody(SandboxInboundBody) },
  responses: { 201: jsonResponse(Message, "The received message"), ...errorResponses(...AUTHED_ERRORS, 404, 409, 413, 415, 422) },
});
