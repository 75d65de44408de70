import { z } from "@hono/zod-openapi";
import { boundedJson } from "../../platform/json-bounds.ts";
import { idParam } from "../../platform/openapi.ts";
import { PaginationQuery } from "../../platform/pagination.ts";
import { Timestamps } from "../schema-fields.ts";

const Tags = z.array(z.string().min(1).max(64)).max(50);
/** Attributes travel in every `contact.created` event: bounded as a whole, not only per value. */
export const MAX_ATTRIBUTES_BYTES = 16 * 1024;
const Attributes = boundedJson(z.record(z.string().max(64), z.union([z.string().max(1024), z.number(), z.boolean(), z.null()])), MAX_ATTRIBUTES_BYTES, 2).openapi({
  description: `Your own fields: string (at most 1,024 characters), number, boolean or null values; at most ${MAX_ATTRIBUTES_BYTES / 1024} KiB as JSON.`,
});

/** Who the person is to the network beside the phone number (WhatsApp: business-scoped user ids and username). */
export const ContactIdentity = z
  .object({
    userId: z.string().max(160).optional().openapi({ description: "WhatsApp's business-scoped user id (BSUID).", example: "US.13491208655302741918" }),
    parentUserId: z.string().max(160).optional().openapi({ description: "The parent BSUID shared across the portfolios of a managed business.", example: "US.ENT.11815799212886844830" }),
    username: z.string().max(64).optional().openapi({ description: "The username the person chose, if any.", example: "@sheena" }),
  })
  .openapi("ContactIdentity");
export type ContactIdentity = z.infer<typeof ContactIdentity>;

export const Contact = z
  .object({
    id: z.string().openapi({ example: "con_0m3x9k2a1b2c3d4e5f6g7h8" }),
    phone: z.string().nullable().openapi({ description: "E.164; null for a person the network named only by BSUID (`identity.userId`) so far.", example: "+14155550123" }),
    chatId: z.string().openapi({ description: "The person's chat: `<digits>@c.us`, or `<BSUID>@bsuid` while no number is known.", example: "14155550123@c.us" }),
    name: z.string().nullable(),
    email: z.string().nullable(),
    tags: z.array(z.string()),
    attributes: z.record(z.string(), z.unknown()),
    optedOut: z.boolean().openapi({ description: "Set by an inbound `STOP`, WhatsApp's stop-promotions (or by you); campaigns skip opted-out contacts." }),
    identity: ContactIdentity.nullable().openapi({ description: "What the network says of the person beside the number (from their messages); null: nothing." }),
    ...Timestamps,
  })
  .openapi("Contact");
export type Contact = z.infer<typeof Contact>;

/** `contact.identity_changed`: what the network said changed of a person, and where their chat is now. */
export const IdentityChange = z
  .object({
    kind: z.string().openapi({ description: "What changed, as the network names it: `user_changed_number` (a new number, and with it a new BSUID) or `user_changed_user_id` (a new BSUID); or `user_number_known`: a person known so far only by BSUID was named with a number, which their contact and chat took.", example: "user_changed_number" }),
    sessionId: z.string().openapi({ description: "The session the network told it on (the chat that moved is this session's)." }),
    contact: Contact.nullable().openapi({ description: "The contact after the change (its new number, unless another contact already had it); null when the person was no contact." }),
    previous: z.object({ phone: z.string().nullable(), chatId: z.string().nullable(), identity: ContactIdentity.nullable() }).openapi({ description: "The number, chat and ids before the change." }),
    chatId: z.string().nullable().openapi({ description: "The person's chat on the session now.", example: "16505559999@c.us" }),
    chatMoved: z.boolean().openapi({ description: "The chat (with its history) moved from `previous.chatId` to `chatId`." }),
  })
  .openapi("IdentityChange");
export type IdentityChange = z.infer<typeof IdentityChange>;

export const CreateContactBody = z
  .strictObject({
    phone: z.string().min(1).max(64).openapi({ description: "E.164 (`+14155550123`) or a chat id.", example: "+14155550123" }),
    name: z.string().min(1).max(200).optional(),
    email: z.email().max(254).optional(),
    tags: Tags.optional(),
    attributes: Attributes.optional(),
    optedOut: z.boolean().optional(),
  })
  .openapi("CreateContact");

export const MAX_IMPORT = 1000;

export const ImportContactsBody = z
  .strictObject({ contacts: z.array(z.unknown()).min(1).max(MAX_IMPORT).openapi({ description: `Up to ${MAX_IMPORT} contacts, each as for \`POST /api/contacts\`.` }) })
  .openapi("ImportContacts");

export const ImportResult = z
  .object({
    created: z.number().int(),
    existing: z.number().int().openapi({ description: "Phones that already had a contact (left unchanged)." }),
    rejected: z.array(z.object({ index: z.number().int(), error: z.object({ code: z.string(), message: z.string() }) })),
  })
  .openapi("ImportResult");

export const UpdateContactBody = z
  .strictObject({
    name: z.string().min(1).max(200).nullable().optional(),
    email: z.email().max(254).nullable().optional(),
    tags: Tags.optional(),
    attributes: Attributes.optional(),
    optedOut: z.boolean().optional(),
  })
  .openapi("UpdateContact");

export const ContactListQuery = PaginationQuery.extend({
  tag: z.string().min(1).max(64).optional().openapi({ description: "Only contacts with this tag." }),
  q: z.string().min(1).max(100).optional().openapi({ description: "Search in name and phone." }),
  optedOut: z.enum(["true", "false"]).optional(),
});

export const ContactIdParam = idParam();
