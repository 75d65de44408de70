import { BSUID } from "../chat-id.ts";
import { z } from "@hono/zod-openapi";
import { idParam } from "../../platform/openapi.ts";
import { PaginationQuery } from "../../platform/pagination.ts";
import { MEDIA_TYPES } from "../media/limits.ts";
import { ContactsToSend, InteractiveSend, Location } from "../messages/content.ts";
import { MAX_TEXT, TemplateSpec } from "../messages/schemas.ts";
import { DeliveryCounts, DeliveryTimes, Timestamps } from "../schema-fields.ts";
import { CAMPAIGN_STATUSES } from "./lifecycle.ts";
import { parseTemplate, TemplateError } from "./template.ts";

export const MAX_CONTACT_IDS = 10_000;

/**
 * Personalised text: every `{{variable}}` must be known, checked here so a typo is a 400 at creation.
 * The length checks abort: zod runs refinements after a failed non-aborting check, and the template
 * is only parsed once its length is known to be within bounds.
 */
const PersonalisedText = (max: number) =>
  z
    .string()
    .min(1, { abort: true })
    .max(max, { abort: true })
    .superRefine((text, ctx) => {
      try {
        parseTemplate(text);
      } catch (err) {
        if (!(err instanceof TemplateError)) throw err;
        ctx.addIssue({ code: "custom", message: err.message, params: { variable: err.variable } });
      }
    })
    .openapi({ description: "May use `{{name}}`, `{{phone}}`, `{{email}}` and `{{attributes.KEY}}`, each with an optional default: `{{name|there}}`." });

export const CampaignMessage = z
  .union([
    z.strictObject({ text: PersonalisedText(MAX_TEXT) }),
    z.strictObject({ template: TemplateSpec }),
    z.strictObject({ location: Location }),
    z.strictObject({ contacts: ContactsToSend }),
    z.strictObject({ interactive: InteractiveSend }),
    z.strictObject({
      type: z.enum(MEDIA_TYPES),
      media: z.strictObject({ url: z.string().url().max(2048).openapi({ description: "A public https URL the network fetches." }) }),
      caption: PersonalisedText(1024).optional().openapi({ description: "Not allowed for audio. May be personalised like text." }),
      filename: z.string().min(1).max(255).optional(),
    }),
  ])
  .openapi("CampaignMessage", { description: "`{text}`, `{template}` (a WhatsApp template), `{location}`, `{contacts}`, `{interactive}` (buttons or a list) or `{type, media: {url}, caption?, filename?}`." });
export type CampaignMessage = z.infer<typeof CampaignMessage>;

export const Audience = z
  .strictObject({
    contactIds: z.array(z.string().min(1).max(64)).min(1).max(MAX_CONTACT_IDS).optional().openapi({ description: "Contacts by id, in send order." }),
    userIds: z
      .array(z.string().regex(BSUID, "must be a WhatsApp BSUID"))
      .min(1)
      .max(MAX_CONTACT_IDS)
      .optional()
      .openapi({ description: "Contacts by WhatsApp BSUID (`identity.userId`), in send order after `contactIds`; each must be a contact's. A contact with no number is sent to by its BSUID.", example: ["US.13491208655302741918"] }),
    tags: z.array(z.string().min(1).max(64)).min(1).max(50).optional().openapi({ description: "Every contact with any of these tags." }),
    all: z.literal(true).optional().openapi({ description: "Every contact of the account." }),
  })
  .refine((a) => a.contactIds || a.userIds || a.tags || a.all, { message: "give contactIds, userIds, tags or all: true" })
  .openapi("CampaignAudience", { description: "Resolved when the campaign starts: opted-out contacts and duplicates are `skipped`." });
export type Audience = z.infer<typeof Audience>;

export const Pacing = z
  .strictObject({
    perMinute: z.number().int().min(1).max(6000).openapi({ example: 30 }),
    jitterPct: z.number().int().min(0).max(90).default(25).openapi({ description: "Each send lands up to this percentage of the interval early or late.", example: 25 }),
  })
  .openapi("CampaignPacing", { description: "Sends per minute through the session's phone, with random jitter. Omitted: the session's `sendRatePerMinute`." });
export type Pacing = z.infer<typeof Pacing>;

const ScheduledAt = z.iso.datetime({ offset: true }).openapi({ description: "ISO 8601. In the future, `start` schedules the campaign for then.", example: "2026-11-01T09:00:00Z" });

export const CreateCampaignBody = z
  .strictObject({
    name: z.string().min(1).max(200),
    sessionId: z.string().min(1).max(64),
    message: CampaignMessage,
    audience: Audience,
    scheduledAt: ScheduledAt.optional(),
    pacing: Pacing.optional(),
  })
  .openapi("CreateCampaign");
export type CreateCampaignBody = z.infer<typeof CreateCampaignBody>;

export const UpdateCampaignBody = z
  .strictObject({
    name: z.string().min(1).max(200).optional(),
    sessionId: z.string().min(1).max(64).optional(),
    message: CampaignMessage.optional(),
    audience: Audience.optional(),
    scheduledAt: ScheduledAt.nullable().optional(),
    pacing: Pacing.nullable().optional(),
  })
  .openapi("UpdateCampaign");
export type UpdateCampaignBody = z.infer<typeof UpdateCampaignBody>;

export const CampaignStats = z
  .object({
    ...DeliveryCounts,
    skipped: z.number().int(),
    charges: z
      .object({
        billable: z.number().int().openapi({ description: "Messages the network reported billable." }),
        byCategory: z.record(z.string(), z.number().int()).openapi({ description: "Billable messages per pricing category (`marketing`, `utility`, ...).", example: { marketing: 2 } }),
      })
      .openapi({ description: "What the network reported it charged for (WhatsApp status `pricing`); zero on networks that report none." }),
  })
  .openapi("CampaignStats", { description: "Each recipient is in exactly one state: the states add up to `total`. Delivery and read keep updating after completion." });
export type CampaignStats = z.infer<typeof CampaignStats>;

export const Campaign = z
  .object({
    id: z.string().openapi({ example: "cmp_0m3x9k2a1b2c3d4e5f6g7h8" }),
    name: z.string(),
    sessionId: z.string(),
    status: z.enum(CAMPAIGN_STATUSES),
    statusReason: z.string().nullable().openapi({ description: "Why a campaign paused itself, e.g. `session_failed: invalid_token`." }),
    message: CampaignMessage,
    audience: Audience,
    scheduledAt: z.string().nullable(),
    pacing: Pacing.nullable(),
    stats: CampaignStats,
    startedAt: z.string().nullable(),
    completedAt: z.string().nullable(),
    cancelledAt: z.string().nullable(),
    etaSeconds: z.number().int().nullable().openapi({ description: "Estimated seconds until every recipient is sent (running campaigns): by the pacing and the session's sending limits." }),
    eta: z.string().nullable().openapi({ description: "When the campaign should finish sending (`etaSeconds` from now); null when not running or unknown." }),
    ...Timestamps,
  })
  .openapi("Campaign");
export type Campaign = z.infer<typeof Campaign>;

export const RECIPIENT_STATUSES = ["pending", "sent", "delivered", "read", "failed", "skipped"] as const;
export type RecipientStatus = (typeof RECIPIENT_STATUSES)[number];

export const Recipient = z
  .object({
    seq: z.number().int().openapi({ description: "Position in send order, from 1." }),
    contactId: z.string(),
    phone: z.string().nullable().openapi({ description: "E.164; null for a contact known only by BSUID (sent to by it)." }),
    chatId: z.string(),
    name: z.string().nullable(),
    status: z.enum(RECIPIENT_STATUSES),
    reason: z.string().nullable().openapi({ description: "Why skipped (`opted_out`, `duplicate`, `cancelled`) or failed (the message's error code)." }),
    error: z.object({ code: z.string(), message: z.string() }).nullable(),
    messageId: z.string().nullable(),
    ...DeliveryTimes,
  })
  .openapi("CampaignRecipient");
export type Recipient = z.infer<typeof Recipient>;

export const CampaignIdParam = idParam("cmp_0m3x9k2a1b2c3d4e5f6g7h8");

export const CampaignListQuery = PaginationQuery.extend({
  status: z.enum(CAMPAIGN_STATUSES).optional(),
});

export const RecipientListQuery = PaginationQuery.extend({
  status: z.enum(RECIPIENT_STATUSES).optional(),
});
