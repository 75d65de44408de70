import { z } from "@hono/zod-openapi";
import { boundedJson } from "../../platform/json-bounds.ts";

/**
 * The typed bodies of the message types beyond text, templates and media, in both directions: what
 * the `content` column holds, shaped and bounded by these schemas (every string and list has a
 * maximum), so a stored row and its events stay small whatever a network sends.
 */
export { MESSAGE_TYPES, type MessageType } from "../message-types.ts";

const str = (max: number) => z.string().max(max);
const label = z.enum(["HOME", "WORK"]);

export const Location = z
  .strictObject({
    latitude: z.number().min(-90).max(90),
    longitude: z.number().min(-180).max(180),
    name: str(1000).optional(),
    address: str(1000).optional(),
    url: str(2048).optional(),
  })
  .openapi("Location", { example: { latitude: 37.44221496582, longitude: -122.16165924072, name: "Philz Coffee", address: "101 Forest Ave, Palo Alto, CA 94301" } });
export type Location = z.infer<typeof Location>;

export const ContactCard = z
  .strictObject({
    name: z.strictObject({
      formattedName: z.string().min(1).max(512),
      firstName: str(256).optional(),
      lastName: str(256).optional(),
      middleName: str(256).optional(),
      prefix: str(64).optional(),
      suffix: str(64).optional(),
    }),
    phones: z.array(z.strictObject({ phone: z.string().min(1).max(64), waId: str(32).optional(), type: label.optional() })).max(20).optional(),
    emails: z.array(z.strictObject({ email: z.string().min(3).max(320), type: label.optional() })).max(20).optional(),
    urls: z.array(z.strictObject({ url: z.string().min(1).max(2048), type: label.optional() })).max(20).optional(),
    org: z.strictObject({ company: str(256).optional(), department: str(256).optional(), title: str(256).optional() }).optional(),
    birthday: z.string().regex(/^\d{4}-\d{2}-\d{2}$/).optional().openapi({ example: "1999-01-23" }),
  })
  .openapi("ContactCard");
export type ContactCard = z.infer<typeof ContactCard>;

/** Shared contact cards: the Cloud API sends at most 5 at once; more received are cut to 20. */
export const MAX_SEND_CONTACTS = 5;
/** Cards travel in the message's events: bounded as a whole, not only per field. */
export const MAX_CONTACTS_BYTES = 32 * 1024;
export const Contacts = boundedJson(z.array(ContactCard).min(1).max(20), MAX_CONTACTS_BYTES, 6);
export const ContactsToSend = boundedJson(z.array(ContactCard).min(1).max(MAX_SEND_CONTACTS), MAX_CONTACTS_BYTES, 6).openapi({ description: `1 to ${MAX_SEND_CONTACTS} contact cards, at most ${MAX_CONTACTS_BYTES / 1024} KiB as JSON.` });

/** A tap on a reply button or a list row (inbound). */
export const InteractiveReply = z
  .strictObject({
    type: z.enum(["button_reply", "list_reply"]),
    id: z.string().max(256),
    title: z.string().max(256),
    description: str(256).optional(),
  })
  .openapi("InteractiveReply");

const InteractiveText = { header: z.string().min(1).max(60).optional(), body: z.string().min(1).max(1024), footer: z.string().min(1).max(60).optional() };

/** Reply buttons (outbound): at most 3. */
export const InteractiveButtons = z
  .strictObject({
    type: z.literal("button"),
    ...InteractiveText,
    buttons: z
      .array(z.strictObject({ id: z.string().min(1).max(256), title: z.string().min(1).max(20) }))
      .min(1)
      .max(3)
      .refine((b) => new Set(b.map((x) => x.id)).size === b.length, "button ids must be unique"),
  })
  .openapi("InteractiveButtons");

/** A list (outbound): up to 10 sections of at most 10 rows each. */
export const InteractiveList = z
  .strictObject({
    type: z.literal("list"),
    ...InteractiveText,
    button: z.string().min(1).max(20).openapi({ description: "Label of the button that opens the list." }),
    sections: z
      .array(
        z.strictObject({
          title: z.string().min(1).max(24).optional(),
          rows: z
            .array(z.strictObject({ id: z.string().min(1).max(200), title: z.string().min(1).max(24), description: z.string().min(1).max(72).optional() }))
            .min(1)
            .max(10),
        }),
      )
      .min(1)
      .max(10)
      .refine((s) => s.length === 1 || s.every((x) => x.title), "every section needs a title when there are several")
      .refine((s) => {
        const ids = s.flatMap((x) => x.rows.map((r) => r.id));
        return new Set(ids).size === ids.length;
      }, "row ids must be unique"),
  })
  .openapi("InteractiveList");

export const InteractiveSend = z.union([InteractiveButtons, InteractiveList]);
export type InteractiveSend = z.infer<typeof InteractiveSend>;
export const Interactive = z.union([InteractiveReply, InteractiveButtons, InteractiveList]).openapi("Interactive");
export type Interactive = z.infer<typeof Interactive>;

/** A template's quick-reply button tapped (inbound). */
export const ButtonReply = z.strictObject({ payload: str(1024), text: str(1024) }).openapi("ButtonReply");

export const Reaction = z
  .strictObject({
    messageId: z.string().max(64).nullable().openapi({ description: "The message reacted to (ours), when it is known." }),
    emoji: z.string().max(32).openapi({ description: "Empty when a reaction was removed.", example: "👍" }),
  })
  .openapi("Reaction");

export const Order = z
  .strictObject({
    catalogId: str(64),
    text: str(4096),
    items: z
      .array(z.strictObject({ productRetailerId: str(256), quantity: z.number().int().min(0), itemPrice: z.number(), currency: str(8) }))
      .max(100),
  })
  .openapi("Order");

/** The largest raw object kept of a message of a type we do not know (as JSON). */
export const MAX_UNSUPPORTED_RAW = 8 * 1024;

export const Unsupported = z
  .strictObject({
    originalType: str(64).openapi({ description: "The type the network gave it." }),
    errors: z.array(z.strictObject({ code: z.number().int(), title: str(256) })).max(5).optional(),
    raw: z.record(z.string(), z.unknown()).nullable().openapi({ description: `The network's message object as received (null when over ${MAX_UNSUPPORTED_RAW} bytes as JSON).` }),
  })
  .openapi("UnsupportedContent");

/** The click-to-WhatsApp ad (or post) a customer's first message came from. */
export const Referral = z
  .strictObject({
    sourceId: str(256),
    sourceType: str(32).openapi({ example: "ad" }),
    sourceUrl: str(2048).optional(),
    headline: str(1024).optional(),
    body: str(4096).optional(),
    mediaType: str(32).optional(),
    ctwaClid: str(1024).optional().openapi({ description: "The ad click id (for conversion reporting)." }),
  })
  .openapi("Referral");

/** What the network charged for an outbound message, from its status updates. */
export const Pricing = z
  .strictObject({
    category: str(64).openapi({ example: "marketing" }),
    billable: z.boolean(),
    model: str(16).optional().openapi({ example: "PMP" }),
    type: str(32).optional().openapi({ description: "The pricing type (`regular`, `free_customer_service`, `free_entry_point`).", example: "regular" }),
  })
  .openapi("Pricing");

/** The network's own words for a failure: its numeric code, title and details. */
export const NetworkError = z.strictObject({ code: z.number().int(), title: str(256).optional(), details: str(1024).optional() }).openapi("NetworkError");

/** A notice from the network about the person (not something they wrote): a changed number or BSUID. */
export const SystemNotice = z
  .strictObject({
    kind: str(64).openapi({ description: "`user_changed_number` or `user_changed_user_id` (others as the network names them).", example: "user_changed_number" }),
    body: str(1024).openapi({ example: "User Sheena changed from +16505551234 to +16505559999" }),
    newChatId: str(64).optional().openapi({ description: "user_changed_number: the chat of the new number (this chat moved there).", example: "16505559999@c.us" }),
    userId: str(160).optional().openapi({ description: "The person's BSUID after the change." }),
  })
  .openapi("SystemNotice");

/** Typed bodies of the non-text, non-media types, and what the network tells of any message: what the `content` column holds. */
export interface Content {
  referral?: z.infer<typeof Referral>;
  /** ISO 8601: when the sender last edited it. */
  editedAt?: string;
  /** ISO 8601: when the sender deleted it (its content is then gone). */
  deletedAt?: string;
  pricing?: z.infer<typeof Pricing>;
  networkError?: z.infer<typeof NetworkError>;
  location?: Location;
  contacts?: ContactCard[];
  interactive?: Interactive;
  button?: z.infer<typeof ButtonReply>;
  reaction?: z.infer<typeof Reaction>;
  order?: z.infer<typeof Order>;
  unsupported?: z.infer<typeof Unsupported>;
  system?: z.infer<typeof SystemNotice>;
  /** Outbound rows not sent through this API: `business_app` (an echo of the WhatsApp Business app on the same number). */
  source?: "business_app";
}

/** The Message fields of the typed bodies (spread into the Message schema). */
export const ContentFields = {
  location: Location.optional(),
  contacts: Contacts.optional(),
  interactive: Interactive.optional(),
  button: ButtonReply.optional(),
  reaction: Reaction.optional(),
  order: Order.optional(),
  unsupported: Unsupported.optional(),
  system: SystemNotice.optional(),
  source: z.enum(["business_app"]).optional().openapi({ description: "Outbound messages sent from the WhatsApp Business app on the session's number (echoes), not through this API." }),
  referral: Referral.optional(),
  editedAt: z.string().optional().openapi({ description: "When the sender last edited the message (its text or caption is the edited one)." }),
  deletedAt: z.string().optional().openapi({ description: "When the sender deleted the message: its text, file and body are gone." }),
  pricing: Pricing.optional(),
  networkError: NetworkError.optional(),
};

/** Reactions on a message, one per person (`me` for the session's own). */
export const ReactionsField = z.array(z.object({ from: z.string().openapi({ example: "16505551234@c.us" }), emoji: z.string() })).openapi({ description: "Reactions on this message, one per person (`me`: this session's)." });

/** The emoji of a reaction: one grapheme-ish run, no control characters. Empty removes. */
export function validEmoji(emoji: string): boolean {
  // eslint-disable-next-line no-control-regex
  return emoji.length <= 32 && !/[\u0000-\u001f\u007f]/.test(emoji);
}
