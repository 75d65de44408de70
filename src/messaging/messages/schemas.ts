import { z } from "@hono/zod-openapi";
import { boundedJson } from "../../platform/json-bounds.ts";
import { PaginationQuery } from "../../platform/pagination.ts";
import { ACCEPTED_ADDRESS_FORMS } from "../chat-id.ts";
import { MEDIA_TYPES } from "../media/limits.ts";
import { DeliveryCounts, DeliveryTimes } from "../schema-fields.ts";
import { MESSAGE_STATUSES } from "../status.ts";
import { ContactsToSend, ContentFields, InteractiveSend, Location, MESSAGE_TYPES, ReactionsField } from "./content.ts";

export const MAX_BULK_ITEMS = 1000;
export const MAX_TEXT = 4096;
/** Template components travel in the message's events (and a campaign's): bounded as a whole. */
export const MAX_COMPONENTS_BYTES = 16 * 1024;

const To = z.string().min(1).max(160).openapi({ description: `The recipient: ${ACCEPTED_ADDRESS_FORMS}. \`POST /api/messages/send\` and \`/api/messages/send-bulk\` also take a contact's WhatsApp BSUID (\`US.13491208655302741918\`, or its chat id \`<BSUID>@bsuid\`): the message goes to that contact's number, or to the BSUID while the contact has no number; a BSUID no contact of the account has is a 400 naming it.`, example: "+14155550123" });
const SessionIdField = z.string().min(1).max(64).openapi({ example: "ses_0m3x9k2a1b2c3d4e5f6g7h8" });
const Text = z.string().min(1).max(MAX_TEXT);
const ReplyTo = z.string().min(1).max(64).optional().openapi({ description: "Id of a message of this chat to quote." });

export const TemplateSpec = z
  .strictObject({
    name: z.string().min(1).max(512).openapi({ example: "order_confirmation" }),
    language: z.string().min(2).max(15).openapi({ description: "Language or locale code of the approved template.", example: "en_US" }),
    components: boundedJson(z.array(z.record(z.string(), z.unknown())).max(20, { abort: true }), MAX_COMPONENTS_BYTES, 8)
      .optional()
      .openapi({ description: "Template components with their parameters, as the WhatsApp Cloud API defines them (`[{type: \"body\", parameters: [{type: \"text\", text: \"Ada\"}]}]`); at most 16 KiB as JSON, nested at most 8 levels." }),
  })
  .openapi("TemplateSpec");
export type TemplateSpec = z.infer<typeof TemplateSpec>;

export const MediaInput = z
  .union([
    z.strictObject({ url: z.string().url().max(2048).openapi({ description: "A public https URL the network fetches." }) }),
    z.strictObject({
      data: z.string().min(1).openapi({ description: "Base64 of the file (size and type limits per media type: see the README)." }),
      mimetype: z.string().min(3).max(127).openapi({ example: "image/png" }),
      filename: z.string().min(1).max(255).optional(),
    }),
  ])
  .openapi("MediaInput");
export type MediaInput = z.infer<typeof MediaInput>;

/** A media message as a bulk item or a sandbox inbound carries it (next to its `to` or `from`). */
export const MediaItemFields = {
  type: z.enum(MEDIA_TYPES),
  media: MediaInput,
  caption: z.string().min(1).max(1024).optional(),
  filename: z.string().min(1).max(255).optional(),
};

const ContactsSend = ContactsToSend;
const ReactionSend = z
  .strictObject({
    messageId: z.string().min(1).max(64).openapi({ description: "Id of a message of this chat (either direction)." }),
    emoji: z.string().max(32).openapi({ description: "One emoji; an empty string removes this session's reaction.", example: "👍" }),
  })
  .openapi("ReactionSend");

/** The content forms every send accepts beyond media: text, a template, a location, contact cards, an interactive message. */
const contentForms = {
  text: z.strictObject({ text: Text }),
  template: z.strictObject({ template: TemplateSpec }),
  location: z.strictObject({ location: Location }),
  contacts: z.strictObject({ contacts: ContactsSend }),
  interactive: z.strictObject({ interactive: InteractiveSend }),
};

export const SendTextBody = z
  .union([
    contentForms.text.extend({ sessionId: SessionIdField, to: To, replyTo: ReplyTo }),
    contentForms.template.extend({ sessionId: SessionIdField, to: To, replyTo: ReplyTo }),
    contentForms.location.extend({ sessionId: SessionIdField, to: To, replyTo: ReplyTo }),
    contentForms.contacts.extend({ sessionId: SessionIdField, to: To, replyTo: ReplyTo }),
    contentForms.interactive.extend({ sessionId: SessionIdField, to: To, replyTo: ReplyTo }),
    z.strictObject({ sessionId: SessionIdField, to: To, reaction: ReactionSend }),
  ])
  .openapi("SendMessage", { description: "Exactly one of `text`, `template`, `location`, `contacts`, `interactive` (reply buttons or a list) or `reaction`." });

export const SendMediaBody = z
  .strictObject({
    sessionId: SessionIdField,
    to: To,
    type: z.enum(MEDIA_TYPES),
    media: MediaInput,
    caption: z.string().min(1).max(1024).optional().openapi({ description: "Not allowed for audio and stickers." }),
    filename: z.string().min(1).max(255).optional().openapi({ description: "Document file name shown to the recipient." }),
    replyTo: ReplyTo,
  })
  .openapi("SendMedia");

/** One item of a bulk send: any content but a reaction, or media. Validated one by one so bad items are reported by index. */
export const BulkItem = z.union([
  contentForms.text.extend({ to: To }),
  contentForms.template.extend({ to: To }),
  contentForms.location.extend({ to: To }),
  contentForms.contacts.extend({ to: To }),
  contentForms.interactive.extend({ to: To }),
  z.strictObject({ to: To, ...MediaItemFields }),
]);
export type BulkItem = z.infer<typeof BulkItem>;

export const SendBulkBody = z
  .strictObject({
    sessionId: SessionIdField,
    messages: z
      .array(z.unknown().openapi({ description: "`{to, text}`, `{to, template}`, `{to, location}`, `{to, contacts}`, `{to, interactive}` or `{to, type, media, caption?, filename?}`" }))
      .min(1)
      .max(MAX_BULK_ITEMS)
      .openapi({ description: `1 to ${MAX_BULK_ITEMS} messages; each is validated on its own and rejected by index.` }),
  })
  .openapi("SendBulk");

export const BulkAccepted = z
  .object({
    batchId: z.string(),
    accepted: z.number().int(),
    rejected: z.array(z.object({ index: z.number().int(), error: z.object({ code: z.string(), message: z.string() }) })),
  })
  .openapi("BulkAccepted");

export const MessageError = z
  .object({
    code: z.string().openapi({
      example: "no_account",
      description:
        "Why the message failed (README \"Messages\" lists the codes). `send_outcome_unknown`: the network never answered the send (timeout, or the connection was lost once open), so it may have been delivered; it is not sent again, and re-sending it is the client's choice.",
    }),
    message: z.string(),
  })
  .openapi("MessageError");

export const MediaInfo = z
  .object({
    url: z.string().nullable().openapi({ description: "The URL given when sending by link; null for uploaded media." }),
    mimetype: z.string().nullable(),
    filename: z.string().nullable(),
    caption: z.string().nullable(),
    size: z.number().int().nullable().openapi({ description: "Bytes, for uploaded media." }),
    voice: z.boolean().optional().openapi({ description: "audio: a voice note recorded in the app." }),
    animated: z.boolean().optional().openapi({ description: "sticker: an animated sticker." }),
    status: z.enum(["pending", "stored", "failed"]).optional().openapi({ description: "Inbound media: `pending` while the file is fetched from the network, `stored` once `GET /api/messages/{id}/media` serves it, `failed` with `reason`." }),
    reason: z.string().optional().openapi({ description: "Why the file could not be stored." }),
  })
  .openapi("MediaInfo");
export type MediaInfo = z.infer<typeof MediaInfo>;

export const Message = z
  .object({
    id: z.string().openapi({ example: "msg_0m3x9k2a1b2c3d4e5f6g7h8" }),
    sessionId: z.string(),
    chatId: z.string().openapi({ example: "14155550123@c.us" }),
    direction: z.enum(["inbound", "outbound"]),
    type: z.enum(MESSAGE_TYPES),
    text: z.string().optional(),
    template: TemplateSpec.optional(),
    media: MediaInfo.optional(),
    ...ContentFields,
    reactions: ReactionsField.optional(),
    status: z.enum(MESSAGE_STATUSES).openapi({ description: "Outbound: `pending -> sent -> delivered -> read`, or `failed`. Inbound: `received`." }),
    error: MessageError.optional(),
    replyTo: z.string().nullable(),
    batchId: z.string().nullable(),
    campaignId: z.string().nullable(),
    createdAt: z.string(),
    ...DeliveryTimes,
  })
  .openapi("Message");
export type Message = z.infer<typeof Message>;

export const Batch = z
  .object({
    id: z.string(),
    sessionId: z.string(),
    ...DeliveryCounts,
    done: z.boolean().openapi({ description: "Every message reached `sent`, `delivered`, `read` or `failed`." }),
    createdAt: z.string(),
  })
  .openapi("Batch");

export const ChatHistoryQuery = PaginationQuery.extend({
  sessionId: z.string().max(64).optional().openapi({ description: "Only this session's messages." }),
});
