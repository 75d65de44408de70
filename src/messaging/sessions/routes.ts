import { idempotency } from "../../platform/idempotency.ts";
import { AUTHED_ERRORS, jsonBody, jsonResponse, routeGroup } from "../../platform/openapi.ts";
import { pageOf, PaginationQuery } from "../../platform/pagination.ts";
import { Message } from "../messages/schemas.ts";
import { CreateSessionBody, SandboxHealthBody, SandboxInboundBody, Session, SessionIdParam, UpdateSessionBody } from "./schemas.ts";

const route = routeGroup({ tags: ["Sessions"], errors: AUTHED_ERRORS });
const byId = { params: SessionIdParam };

export const createSessionRoute = route("post", "/api/sessions", "Create a session (sandbox, or WhatsApp Cloud API with credentials checked at once)", {
  description: "Answers 201 with the session: `WORKING` when connected, `FAILED` with `statusReason` when the network refused the credentials.",
  middleware: [idempotency()] as const, request: { body: jsonBody(CreateSessionBody) },
  responses: { 201: jsonResponse(Session, "The session") }, errors: [413, 415, 422],
});

export const listSessionsRoute = route("get", "/api/sessions", "List sessions, newest first", { request: { query: PaginationQuery }, responses: { 200: jsonResponse(pageOf(Session, "SessionPage"), "A page of sessions") } });

export const getSessionRoute = route("get", "/api/sessions/{id}", "Get a session", { request: byId, responses: { 200: jsonResponse(Session, "The session") }, errors: [404] });

export const updateSessionRoute = route("patch", "/api/sessions/{id}", "Change a session's sending limits", {
  description: "Takes effect at once, for queued sends too. Emits `session.updated`.",
  request: { ...byId, body: jsonBody(UpdateSessionBody) }, responses: { 200: jsonResponse(Session, "The updated session") }, errors: [404, 409, 413, 415, 422],
});

export const deleteSessionRoute = route("delete", "/api/sessions/{id}", "Stop a session for good (status STOPPED; credentials erased; queued sends fail)", {
  request: byId, responses: { 200: jsonResponse(Session, "The stopped session") }, errors: [404],
});

export const restartSessionRoute = route("post", "/api/sessions/{id}/restart", "Reconnect a session (FAILED -> STARTING -> WORKING | FAILED)", {
  request: byId, responses: { 200: jsonResponse(Session, "The session after reconnecting") }, errors: [404, 409],
});

export const sandboxInboundRoute = route("post", "/api/sessions/{id}/sandbox/inbound", "Make a sandbox session receive a message", {
  middleware: [idempotency()] as const, request: { ...byId, body: jsonBody(SandboxInboundBody) },
  responses: { 201: jsonResponse(Message, "The received message") }, errors: [404, 409, 413, 415, 422],
});

export const sandboxHealthRoute = route("post", "/api/sessions/{id}/sandbox/health", "Make a sandbox session hear of a change of its standing (restricted, banned, violation, ok)", {
  description: "As WhatsApp's `account_update` webhook does: the session's `health` changes and `session.restricted` is emitted (`session.updated` for `ok`).",
  request: { ...byId, body: jsonBody(SandboxHealthBody) }, responses: { 200: jsonResponse(Session, "The session with its new health") }, errors: [404, 413, 415, 422],
});
