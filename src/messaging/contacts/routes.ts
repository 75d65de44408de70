import { z } from "@hono/zod-openapi";
import { idempotency } from "../../platform/idempotency.ts";
import { AUTHED_ERRORS, jsonBody, jsonResponse, routeGroup } from "../../platform/openapi.ts";
import { pageOf } from "../../platform/pagination.ts";
import { Contact, ContactIdParam, ContactListQuery, CreateContactBody, ImportContactsBody, ImportResult, UpdateContactBody } from "./schemas.ts";

const route = routeGroup({ tags: ["Contacts"], errors: AUTHED_ERRORS });
const ContactDeleted = z.object({ id: z.string(), deleted: z.literal(true) }).openapi("ContactDeleted");

export const createContactRoute = route("post", "/api/contacts", "Create a contact (unique per account by phone)", {
  middleware: [idempotency()] as const, request: { body: jsonBody(CreateContactBody) },
  responses: { 201: jsonResponse(Contact, "The contact") }, errors: [409, 413, 415, 422],
});

export const listContactsRoute = route("get", "/api/contacts", "List contacts, newest first; filter by tag, search, opt-out", {
  request: { query: ContactListQuery }, responses: { 200: jsonResponse(pageOf(Contact, "ContactPage"), "A page of contacts") },
});

export const getContactRoute = route("get", "/api/contacts/{id}", "Get a contact", { request: { params: ContactIdParam }, responses: { 200: jsonResponse(Contact, "The contact") }, errors: [404] });

export const updateContactRoute = route("put", "/api/contacts/{id}", "Update the given fields of a contact", {
  request: { params: ContactIdParam, body: jsonBody(UpdateContactBody) }, responses: { 200: jsonResponse(Contact, "The updated contact") }, errors: [404, 413, 415],
});

export const deleteContactRoute = route("delete", "/api/contacts/{id}", "Delete a contact", { request: { params: ContactIdParam }, responses: { 200: jsonResponse(ContactDeleted, "Deleted") }, errors: [404] });

export const importContactsRoute = route("post", "/api/contacts/import", "Create up to 1,000 contacts at once", {
  description:
    "Each item is validated on its own (rejected by index); phones that already have a contact are counted as `existing` and left unchanged. `contact.created` is emitted for each new one.",
  middleware: [idempotency()] as const, request: { body: jsonBody(ImportContactsBody) },
  responses: { 200: jsonResponse(ImportResult, "What was created") }, errors: [413, 415, 422],
});
