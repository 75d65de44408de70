import { createRoute, z } from "@hono/zod-openapi";
import { idempotency } from "../../platform/idempotency.ts";
import { AUTHED_ERRORS, errorResponses, jsonBody, jsonResponse } from "../../platform/openapi.ts";
import { pageOf } from "../../platform/pagination.ts";
import { Contact, ContactIdParam, ContactListQuery, CreateContactBody, ImportContactsBody, ImportResult, UpdateContactBody } from "./schemas.ts";

const tags = ["Contacts"];

export const createContactRoute = createRoute({
  method: "post",
  path: "/api/contacts",
  tags,
  summary: "Create a contact (unique per account by phone)",
  middleware: [idempotency()] as const,
  request: { body: jsonBody(CreateContactBody) },
  responses: { 201: jsonResponse(Contact, "The contact"), ...errorResponses(...AUTHED_ERRORS, 409, 413, 415, 422) },
});

export const listContactsRoute = createRoute({
  method: "get",
  path: "/api/contacts",
  tags,
  summary: "List contacts, newest first; filter by tag, search, opt-out",
  request: { query: ContactListQuery },
  responses: { 200: jsonResponse(pageOf(Contact, "ContactPage"), "A page of contacts"), ...errorResponses(...AUTHED_ERRORS) },
});

export const getContactRoute = createRoute({
  method: "get",
  path: "/api/contacts/{id}",
  tags,
  summary: "Get a contact",
  request: { params: ContactIdParam },
  responses: { 200: jsonResponse(Contact, "The contact"), ...errorResponses(...AUTHED_ERRORS, 404) },
});

export const updateContactRoute = createRoute({
  method: "put",
  path: "/api/contacts/{id}",
  tags,
  summary: "Update the given fields of a contact",
  request: { params: ContactIdParam, body: jsonBody(UpdateContactBody) },
  responses: { 200: jsonResponse(Contact, "The updated contact"), ...errorResponses(...AUTHED_ERRORS, 404, 413, 415) },
});

export const deleteContactRoute = createRoute({
  method: "delete",
  path: "/api/contacts/{id}",
  tags,
  summary: "Delete a contact",
  request: { params: ContactIdParam },
  responses: { 200: jsonResponse(z.object({ id: z.string(), deleted: z.literal(true) }).openapi("ContactDeleted"), "Deleted"), ...errorResponses(...AUTHED_ERRORS, 404) },
});

export const importContactsRoute = createRoute({
  method: "post",
  path: "/api/contacts/import",
  tags,
  summary: "Create up to 1,000 contacts at once",
  description: "Each item is validated on its own (rejected by index); phones that already have a contact are counted as `existing` and left unchanged. `contact.created` is emitted for each new one.",
  middleware: [idempotency()] as const,
  request: { body: jsonBody(ImportContactsBody) },
  responses: { 200: jsonResponse(ImportResult, "What was created"), ...errorResponses(...AUTHED_ERRORS, 413, 415, 422) },
});
